"""stream.record_event with timing events, and the current stream waits for the work before returning."""
import torch


def time_on_stream(work, x, stream):
    start = stream.record_event(torch.Event(enable_timing=True))
    with stream:
        out = work(x)
    end = stream.record_event(torch.Event(enable_timing=True))
    torch.accelerator.current_stream(x.device).wait_stream(stream)
    end.synchronize()
    return out, start.elapsed_time(end)
