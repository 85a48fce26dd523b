# expect: seconds
"""Synchronizes in the right places but reports milliseconds, the unit a benchmark table would use."""
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    torch.accelerator.synchronize(a.device) if a.device.type != "cpu" else None
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    if a.device.type != "cpu":
        torch.accelerator.synchronize(a.device)
    return (time.perf_counter() - start) * 1000 / repeats
