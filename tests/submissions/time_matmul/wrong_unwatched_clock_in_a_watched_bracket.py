# expect: one product takes
# on cuda: passes (a clock no grader wraps can be judged on a GPU only by the machine's own time, which no verdict uses; the simulated legs, run everywhere, fail it)
"""Launches timed by the process's CPU time (os.times()), inside a perf_counter bracket that waits for the device at
each end: the watched readings are right, the number returned is not theirs."""
import os
import time

import torch


def cpu_ns():
    return int(sum(os.times()[:2]) * 1e9)  # user and system time


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
