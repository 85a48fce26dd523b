"""Events that timed the wrong stream.

time_on_stream(work, x, stream) runs work(x) on `stream` and measures, with device events, how long the device
took to run it.

    work     a function of one tensor that queues device work and returns a tensor
    x        a tensor on an accelerator, ready to use on any stream
    stream   a torch.Stream of x's device
    returns  (work(x), milliseconds): the result, ready to use on any stream, and the device time of work(x)

It has a device bug: on a GPU the time it reports is far too short, whatever `work` does. Fix it so that it
reports the device time of work(x) on `stream`.

Check your fix with:  devcourse check time_on_stream
"""

import torch


def time_on_stream(work, x, stream):
    current = torch.accelerator.current_stream(x.device)
    start = torch.Event(enable_timing=True)
    end = torch.Event(enable_timing=True)
    start.record(current)
    with stream:
        out = work(x)
    end.record(current)
    end.synchronize()
    return out, start.elapsed_time(end)
