# expect: measured the current stream
"""Records the events without a stream (the current stream of the current device), the work on `stream`."""
import torch


def time_on_stream(work, x, stream):
    start = torch.Event(enable_timing=True)
    end = torch.Event(enable_timing=True)
    start.record()
    with stream:
        out = work(x)
    end.record()
    end.synchronize()
    return out, start.elapsed_time(end)
