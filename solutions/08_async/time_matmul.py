"""A matmul benchmark: the reference fix.

On an accelerator `a @ b` only queues the product and returns, so the clock around it measures launches.
Synchronise before starting the clock (so work queued earlier, the warm-up included, is not billed to the
products) and before stopping it (so the products have really finished). torch.accelerator.synchronize(device)
waits for that device on any accelerator (torch.mps.synchronize() takes no device, so the device module's own
call is not the same everywhere); the CPU needs no wait.
"""

import time

import torch


def wait_for(device: torch.device) -> None:
    if device.type != "cpu":
        torch.accelerator.synchronize(device)


def time_matmul(a: torch.Tensor, b: torch.Tensor, repeats: int = 10) -> float:
    a @ b                                   # warm-up
    wait_for(a.device)
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    wait_for(a.device)
    elapsed = time.perf_counter() - start
    return elapsed / repeats
