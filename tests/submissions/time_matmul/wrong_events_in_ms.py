# expect: elapsed_time() of device events is in milliseconds
"""Times with device events but forgets that elapsed_time is in milliseconds: returns ms, not seconds."""
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
    end.synchronize()
    return start.elapsed_time(end) / repeats
