# expect: measured the current stream
"""Synchronizes before reading the time, but the events are still on the current stream."""
import torch


def time_on_stream(work, x, stream):
    current = torch.accelerator.current_stream(x.device)
    start = torch.Event(enable_timing=True)
    end = torch.Event(enable_timing=True)
    start.record(current)
    with stream:
        out = work(x)
    end.record(current)
    torch.accelerator.synchronize(x.device)
    return out, start.elapsed_time(end)
