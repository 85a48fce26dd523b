"""A matmul benchmark that is 300 times too fast.

time_matmul(a, b, repeats) returns the mean time, in seconds, of one matrix product a @ b on the device
where a and b live. The team uses it to pick a tile size for their kernels.

On the CPU the numbers are plausible. On the GPU they are tiny and do not grow with the matrix size:
the benchmark measures something else than the product. Fix it so that it measures the products
themselves, and only them, on any device.

Check your fix with:  devcourse check time_matmul
"""

import time

import torch


def time_matmul(a: torch.Tensor, b: torch.Tensor, repeats: int = 10) -> float:
    a @ b                                   # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    elapsed = time.perf_counter() - start
    return elapsed / repeats
