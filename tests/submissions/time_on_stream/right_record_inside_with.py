"""Records both events inside `with stream:`, where the stream is current."""
import torch


def time_on_stream(work, x, stream):
    start = torch.Event(enable_timing=True)
    end = torch.Event(enable_timing=True)
    with stream:
        start.record()
        out = work(x)
        end.record()
    end.synchronize()
    return out, start.elapsed_time(end)
