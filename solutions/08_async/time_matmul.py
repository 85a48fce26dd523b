"""A matmul benchmark: the reference fix.

On an accelerator `a @ b` only queues the product and returns, so the clock around it measures launches.
Synchronise before starting the clock (so work queued earlier, the warm-up included, is not billed to the
products) and before stopping it (so the products have really finished). torch.get_device_module(device)
is torch.cuda on a CUDA tensor, and the matching module on other accelerators; the CPU needs no wait.
"""

import time

import torch


def wait_for(device: torch.device) -> None:
    if device.type != "cpu":
        torch.get_device_module(device).synchronize(device)


def time_matmul(a: torch.Tensor, b: torch.Tensor, repeats: int = 10) -> float:
    a @ b                                   # warm-up
    wait_for(a.device)
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    wait_for(a.device)
    elapsed = time.perf_counter() - start
    return elapsed / repeats
