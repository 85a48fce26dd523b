# expect: Both events must be completed
"""Device events, but elapsed_time is read without waiting for the end event."""
import time

import torch


def time_matmul(a, b, repeats=10):
    a @ b
    if a.device.type == "cpu":
        start = time.perf_counter()
        for _ in range(repeats):
            a @ b
        return (time.perf_counter() - start) / repeats
    mod = torch.get_device_module(a.device)
    start, end = mod.Event(enable_timing=True), mod.Event(enable_timing=True)
    stream = mod.current_stream(a.device)
    start.record(stream)
    for _ in range(repeats):
        a @ b
    end.record(stream)
    return start.elapsed_time(end) / 1000 / repeats
