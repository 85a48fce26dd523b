# expect: includes the 60 ms of work queued on the stream before the call
"""Records the end on the stream but the start on the current stream: the start is reached at once, before the
stream's earlier work."""
import torch


def time_on_stream(work, x, stream):
    current = torch.accelerator.current_stream(x.device)
    start = torch.Event(enable_timing=True)
    end = torch.Event(enable_timing=True)
    start.record(current)
    with stream:
        out = work(x)
    end.record(stream)
    end.synchronize()
    return out, start.elapsed_time(end)
