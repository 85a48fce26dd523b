"""Device-generic torch.Event timing on accelerators (waits for the end event), perf_counter on the CPU."""
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b                                                   # warm-up
    if a.device.type == "cpu":
        start = time.perf_counter()
        for _ in range(repeats):
            a @ b
        return (time.perf_counter() - start) / repeats
    start = torch.Event(device=a.device, enable_timing=True)
    end = torch.Event(device=a.device, enable_timing=True)
    start.record()
    for _ in range(repeats):
        a @ b
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1000.0 / repeats
