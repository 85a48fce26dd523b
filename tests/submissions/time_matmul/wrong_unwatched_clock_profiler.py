# expect: one product takes
# on cuda: passes (a clock no grader wraps can be judged on a GPU only by the machine's own time, which no verdict uses; the simulated legs, run everywhere, fail it)
"""Launches timed by torch's profiler (the CPU time of aten::matmul), then a wait."""
import torch


def time_matmul(a, b, repeats=10):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(repeats):
            a @ b
    if a.device.type != "cpu":
        torch.accelerator.synchronize(a.device)
    us = sum(e.cpu_time_total for e in prof.key_averages() if e.key == "aten::matmul")
    return max(us, 1.0) / 1e6 / repeats
