# expect: ran no device work between its first and last clock reads
import time

import torch


def time_matmul(a, b, repeats=10):
    wait = (lambda: None) if a.device.type == "cpu" else torch.get_device_module(a.device).synchronize
    wait()
    start = time.perf_counter()
    wait()
    elapsed = time.perf_counter() - start
    for _ in range(repeats):
        c = a @ b
    wait()
    return elapsed / repeats
