"""Device-generic torch.Event timing on the stream of a's device (waits for the end event), perf_counter on the CPU."""
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
    stream = torch.accelerator.current_stream(a.device)
    start.record(stream)
    for _ in range(repeats):
        a @ b
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) / 1000.0 / repeats
