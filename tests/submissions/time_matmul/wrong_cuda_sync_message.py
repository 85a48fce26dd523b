# expect: synchronizes through torch.cuda only
# on cuda: passes (torch.cuda waits for CUDA; the simulator stands for MPS, XPU and the others, where it does not)
"""A guarded torch.cuda.synchronize(device): right on CUDA, no wait anywhere else. The message must say that
torch.cuda covers no other accelerator (issue 27), not only "synchronize the device"."""
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    if torch.cuda.is_available():
        torch.cuda.synchronize(a.device)
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    if torch.cuda.is_available():
        torch.cuda.synchronize(a.device)
    return (time.perf_counter() - start) / repeats
