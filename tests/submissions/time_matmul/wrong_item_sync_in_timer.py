# expect: still had queued work
"""Waits for the products by reading one value (.item()) before stopping the clock, but starts the clock
while the warm-up and earlier work are still queued."""
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    c[0, 0].item()
    return (time.perf_counter() - start) / repeats
