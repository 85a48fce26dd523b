import torch


def time_matmul(a, b, repeats=10):
    a @ b
    if a.device.type == "cpu":
        import time
        start = time.perf_counter()
        for _ in range(repeats):
            a @ b
        return (time.perf_counter() - start) / repeats
    events = torch.get_device_module(a.device)
    start, end = events.Event(enable_timing=True), events.Event(enable_timing=True)
    stream = events.current_stream(a.device)
    start.record(stream)
    for _ in range(repeats):
        a @ b
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) / 1000 / repeats     # elapsed_time is in milliseconds
