# expect: the first read came while
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Best of three rounds with an imported clock, but the device module's synchronize() without a device waits
for the current device, which need not be the one a and b are on."""
from timeit import default_timer as clock

import torch


def sync(t):
    if t.device.type != "cpu":
        torch.get_device_module(t.device).synchronize()


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
