"""Events on the stream, the time kept in a variable and rounded to microseconds."""
import torch


def time_on_stream(work, x, stream):
    marks = [torch.Event(enable_timing=True) for _ in range(2)]
    marks[0].record(stream)
    with stream:
        result = work(x)
    marks[1].record(stream)
    marks[1].synchronize()
    elapsed = marks[0].elapsed_time(marks[1])
    return result, round(elapsed, 3)
