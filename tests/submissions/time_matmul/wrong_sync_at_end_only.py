# expect: the first read came while
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    if a.device.type != "cpu":
        torch.get_device_module(a.device).synchronize(a.device)
    return (time.perf_counter() - start) / repeats
