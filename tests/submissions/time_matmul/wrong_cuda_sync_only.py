# expect: still had queued work
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""Follows the CUDA recipe only: torch.cuda.synchronize() when CUDA is there; other accelerators never wait."""
import time

import torch


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_matmul(a, b, repeats=10):
    a @ b
    _sync()
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    _sync()
    return (time.perf_counter() - start) / repeats
