# expect: per product
"""Synchronises around the loop correctly but returns the total time of all products, not the mean."""
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    if a.device.type != "cpu":
        torch.accelerator.synchronize(a.device)
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    if a.device.type != "cpu":
        torch.accelerator.synchronize(a.device)
    return time.perf_counter() - start
