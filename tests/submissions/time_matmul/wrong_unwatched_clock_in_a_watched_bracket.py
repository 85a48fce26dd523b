# expect: one product takes
"""Launches timed by the thread's CPU time in /proc, inside a perf_counter bracket that waits for the device at
each end: the watched readings are right, the number returned is not theirs."""
import time

import torch


def cpu_ns():
    with open("/proc/thread-self/schedstat") as f:
        return int(f.read().split()[0])


def time_matmul(a, b, repeats=10):
    wait = lambda: torch.accelerator.synchronize(a.device) if a.device.type != "cpu" else None
    wait()
    t0 = time.perf_counter()
    start = cpu_ns()
    for _ in range(repeats):
        a @ b
    stop = cpu_ns()
    wait()
    t1 = time.perf_counter()
    return max(stop - start, 1000) / 1e9 / repeats
