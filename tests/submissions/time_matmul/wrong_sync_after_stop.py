# expect: the last read came while
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    if a.device.type != "cpu":
        torch.get_device_module(a.device).synchronize(a.device)
    start = time.perf_counter()
    for _ in range(repeats):
        c = a @ b
    elapsed = time.perf_counter() - start
    if a.device.type != "cpu":
        torch.get_device_module(a.device).synchronize(a.device)   # wait before returning
    return elapsed / repeats
