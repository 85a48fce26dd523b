"""Waits on the current stream of a's device (stream.synchronize()) around a monotonic clock."""
import time

import torch


def time_matmul(a, b, repeats=10):
    def wait():
        if a.device.type != "cpu":
            torch.get_device_module(a.device).current_stream(a.device).synchronize()
    a @ b
    wait()
    t0 = time.monotonic()
    for _ in range(repeats):
        a @ b
    wait()
    return (time.monotonic() - t0) / repeats
