# expect: still had queued work
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Device events converted to seconds per product, but recorded on the current stream of the current device,
which need not be the device a and b are on."""
import time

import torch


def time_matmul(a, b, repeats=10):
    if a.device.type == "cpu":
        start = time.perf_counter()
        for _ in range(repeats):
            a @ b
        return (time.perf_counter() - start) / repeats
    mod = torch.get_device_module(a.device)
    start, end = mod.Event(enable_timing=True), mod.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        a @ b
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / repeats
