"""Device events on the current stream of a's device, the elapsed milliseconds converted to seconds per product."""
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
    stream = mod.current_stream(a.device)
    start.record(stream)
    for _ in range(repeats):
        a @ b
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / repeats
