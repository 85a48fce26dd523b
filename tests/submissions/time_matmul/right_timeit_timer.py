"""timeit.default_timer with the device module's synchronize before each read."""
import timeit

import torch


def time_matmul(a, b, repeats=10):
    sync = (lambda: None) if a.device.type == "cpu" else (lambda: torch.get_device_module(a.device).synchronize(a.device))
    a @ b
    sync()
    t0 = timeit.default_timer()
    for _ in range(repeats):
        a @ b
    sync()
    return (timeit.default_timer() - t0) / repeats
