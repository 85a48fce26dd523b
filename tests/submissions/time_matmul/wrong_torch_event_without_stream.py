# expect: still had queued work
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Device-generic torch.Event timing, but recorded without a stream: torch.Event keeps only the device's type, so
the events go to the current stream of the current device, which need not be the device a and b are on."""
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
