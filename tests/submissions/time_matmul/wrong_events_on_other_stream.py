# expect: still had queued work
"""Device events, but elapsed_time is read without waiting for the end event (end.synchronize() omitted)."""
import torch


def time_matmul(a, b, repeats=10):
    if a.device.type == "cpu":
        import time
        t0 = time.perf_counter()
        for _ in range(repeats):
            a @ b
        return (time.perf_counter() - t0) / repeats
    start, end = torch.Event(enable_timing=True), torch.Event(enable_timing=True)
    a @ b
    start.record()
    for _ in range(repeats):
        a @ b
    end.record()
    return start.elapsed_time(end) / 1000 / repeats
