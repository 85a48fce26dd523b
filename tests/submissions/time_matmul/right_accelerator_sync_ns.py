"""torch.accelerator.synchronize(device) around a perf_counter_ns region."""
import time

import torch


def _wait(t):
    if t.device.type != "cpu":
        torch.accelerator.synchronize(t.device)


def time_matmul(a, b, repeats=10):
    c = a @ b
    _wait(c)
    t0 = time.perf_counter_ns()
    for _ in range(repeats):
        c = a @ b
    _wait(c)
    t1 = time.perf_counter_ns()
    return (t1 - t0) / 1e9 / repeats
