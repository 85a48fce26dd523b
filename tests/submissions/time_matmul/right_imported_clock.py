from timeit import default_timer as clock

import torch


def sync(t):
    if t.device.type != "cpu":
        torch.get_device_module(t.device).synchronize(t.device)


def time_matmul(a, b, repeats=10):
    best = float("inf")
    for _ in range(3):                     # best of three rounds
        sync(a)
        t0 = clock()
        for _ in range(repeats):
            c = a @ b
        sync(c)
        best = min(best, (clock() - t0) / repeats)
    return best
