# expect: seconds
"""perf_counter_ns() for precision, but the nanoseconds are returned as they are."""
import time

import torch


def time_matmul(a, b, repeats=10):
    sync = (lambda: torch.get_device_module(a.device).synchronize(a.device)) if a.device.type != "cpu" else (lambda: None)
    a @ b
    sync()
    start = time.perf_counter_ns()
    for _ in range(repeats):
        a @ b
    sync()
    return (time.perf_counter_ns() - start) / repeats
