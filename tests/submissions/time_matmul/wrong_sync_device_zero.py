# expect: queued work
"""Synchronises accelerator 0 explicitly, not the device a and b are on."""
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    if a.device.type != "cpu":
        torch.accelerator.synchronize(0)
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    if a.device.type != "cpu":
        torch.accelerator.synchronize(0)
    return (time.perf_counter() - start) / repeats
