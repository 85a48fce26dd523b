"""Grader for time_matmul: a host clock around device work must be read with the device idle.

No verdict depends on the machine's own clock, its speed or its load. While the learner's function runs, the host
clocks (time.perf_counter, time.time, time.monotonic and their _ns forms, process_time, timeit.default_timer, and
any of them imported by name into the submission) are wrapped: each read notes whether the device still had
queued work (the current stream's query(), which CUDA and the simulator both answer) and how many device
operations had run so far (counted by `measure`). On the simulated legs the reads are answered from the
simulator's virtual host clock, and each product costs the device a day of virtual time (PRODUCT_US): longer
than any real time the call may last, so a number measured by a clock no grader can wrap (the thread's CPU time
in /proc, os.times(), torch's profiler) is always far below it, however loaded the machine.

To make "earlier work" real, the grader queues work before the call that keeps the device busy (a long
kernel on CUDA, a few operations on the simulator, whose device always runs behind the host). The verdict:

* every clock read happens with the device idle: a read while work is queued measures launches, not the
  work (the first read must follow a synchronisation too, or earlier work is billed to the products);
* device work (the products) runs between the first and the last read;
* a function that reads no host clock must time with device events: then the device must be idle when it
  returns (an end event waited for) and the result a positive number of seconds;
* the number is in seconds per product: `repeats` times the result fits in the timed part of the call as the
  learner's own clock readings measure it (the longest interval between two readings of one clock), or as device
  events measure it where no clock was read twice, with a margin of two, which a right timing never needs and a
  total (repeats >= 3), milliseconds or nanoseconds always exceed (on the accelerator legs);
* on the simulated legs, the number is at least half of one product's virtual time (the products are what was
  timed). The real legs do not judge this: only the machine's clock could, and its verdict would depend on load.

The function runs with another device than the leg's current (grader.engine.expect.other_device_current), as every
learner call does: a synchronize() without a device argument waits for that other device, not for the
products, on both simulated legs and on two GPUs."""

import contextlib
import functools
import linecache
import math
import random
import re
import threading
import time
import timeit

import torch

from grader.engine.expect import (device_in_virtual_time, fail, keep_busy, measure, other_device_current, running,
                           virtual_host_clock)

FIX = ("on an accelerator `a @ b` only queues the product, so the clock measured launches. Synchronize the device before starting the clock and before stopping it (or time with device "
       "events).")
CUDA_ONLY = (" Your file synchronizes through torch.cuda only: on {device} torch.cuda.is_available() is False and "
             "torch.cuda.synchronize() waits for nothing (as on MPS or XPU); torch.accelerator.synchronize(a.device) "
             "waits for any accelerator.")
#: One product's cost on the simulated device's virtual clock: a day, beyond any real time a call may last (a
#: check's wall limit, grader.engine.limits.wall_limit, is minutes), on any number of cores.
PRODUCT_US = 86_400e6
CLOCKS = [(time, n) for n in ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns",
                              "process_time", "process_time_ns", "clock_gettime", "clock_gettime_ns",
                              "thread_time", "thread_time_ns") if hasattr(time, n)] + [(timeit, "default_timer")]


def cuda_only_note(submission, device) -> str:
    """Said where the file waits through torch.cuda and the leg is another accelerator (a hint in the message, read
    from the source; the verdict itself is the clock readings')."""
    if device.type in ("cpu", "cuda"):
        return ""
    source = "".join(linecache.getlines(submission.filename))
    if re.search(r"cuda\.(synchronize|is_available|current_stream|Event)", source) is None:
        return ""
    return CUDA_ONLY.format(device=device)


def idle(device) -> bool:
    if device.type == "cpu":
        return True
    mod = torch.get_device_module(device)
    return bool(mod.current_stream(device).query())


_watching: list = []  # while a call is timed: (thread, device, measurement, reads, virtual clock or None, bases)


def _virtual_value(virtual, bases, name, original, args, kwargs):
    """A clock read answered from the virtual clock: the clock's own value at its first read in the call, plus the
    virtual time since (in the clock's unit)."""
    now = virtual()
    if name not in bases:
        bases[name] = (original(*args, **kwargs), now)
    first, at = bases[name]
    if name.endswith("_ns"):
        return first + round((now - at) * 1e9)
    return first + (now - at)


def _watched(original, name):
    """A clock that records each reading made on the timed thread while _watching says so (on a simulated leg,
    answered from the virtual clock)."""
    @functools.wraps(original)
    def clock(*args, **kwargs):
        if not _watching or threading.get_ident() != _watching[0][0]:  # a timeout watchdog's clock is not the learner's
            return original(*args, **kwargs)
        _, device, m, reads, virtual, bases = _watching[0]
        was_idle, kernels = idle(device), m.kernels
        if virtual is None:
            value = original(*args, **kwargs)
        else:
            value = _virtual_value(virtual, bases, name, original, args, kwargs)
        reads.append((was_idle, kernels, name, value / 1e9 if name.endswith("_ns") else value))
        return value
    return clock


# In place from the grader's import on, before the learner's file is loaded: a clock the file keeps (`from time
# import perf_counter`, a default argument `clock=time.perf_counter`) is the watched one too.
for _mod, _name in CLOCKS:
    setattr(_mod, _name, _watched(getattr(_mod, _name), _name))


@contextlib.contextmanager
def watched_clocks(device, m, reads):
    """Each reading of a clock by the learner's code, on this thread: (device idle, kernels run so far, the
    clock's name, the value read, in seconds; virtual on a simulated leg)."""
    _watching.append((threading.get_ident(), device, m, reads, virtual_host_clock(device), {}))
    try:
        yield
    finally:
        _watching.clear()


class Span:
    """The grader's own measure of the call on the device: events recorded on its stream around it (on the
    simulator, the virtual clock)."""

    def __init__(self, device):
        self.mod = None if device.type == "cpu" else torch.get_device_module(device)
        self.stream = self.mod.current_stream(device) if self.mod else None  # the leg's, not the current device's
        self.events = [self.mod.Event(enable_timing=True) for _ in range(2)] if self.mod else []

    def __enter__(self):
        if self.events:
            self.events[0].record(self.stream)
        return self

    def __exit__(self, *exc):
        if self.events:
            self.events[1].record(self.stream)

    def seconds(self) -> float | None:
        if not self.events:
            return None
        self.events[1].synchronize()
        return self.events[0].elapsed_time(self.events[1]) / 1000


def timed(reads, span: Span) -> tuple[float | None, str]:
    """How long the timed part of the call took, and by which clock: by the learner's own readings, the longest
    interval between two readings of one clock (what a right mean is computed from: the learner's number against
    the learner's own readings, whatever the machine's speed); where no clock was read twice, by the device's
    events."""
    values: dict[str, list[float]] = {}
    for *_, name, value in reads:
        values.setdefault(name, []).append(value)
    intervals = {name: max(v) - min(v) for name, v in values.items() if len(v) > 1}
    if intervals:
        name = max(intervals, key=intervals.get)
        return intervals[name], f"{name}()"
    return span.seconds(), "the device's events"


def run(submission, device):
    # On a real GPU the products must outlast Python's loop, or the device may happen to be idle at a badly
    # placed clock read (cuBLAS's first use even synchronises): a few ms each. The simulator's device always
    # runs behind the host on its virtual clock, so small matrices do there, and the CPU has no queue at all.
    n = 4096 if device.type in ("cuda", "mps") else random.randint(48, 96)
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    repeats = random.randint(3, 6)
    reads = []
    with measure(device) as m, other_device_current(device):
        keep_busy(device)  # on the leg's device, while another is current: a wait must name the device
        with running(f"time_matmul(a, b, {repeats}) with a, b on {device}", submission), \
                device_in_virtual_time(device, PRODUCT_US):
            with Span(device) as span, watched_clocks(device, m, reads):
                result = submission.time_matmul(a, b, repeats)
                done = idle(device)  # before the span records its end event: on CUDA that is queued work too
    if isinstance(result, torch.Tensor) or not isinstance(result, (int, float)) or not math.isfinite(result):
        fail(f"time_matmul should return a number of seconds (a Python float), got {result!r}.")
    return result, reads, done, m, span, repeats, (a, b)


def product_seconds(a, b, device) -> float | None:
    """How long one product takes on a simulated device, by the grader's own events around two of them, on the
    virtual clock as the call's were. A timing that waited for the products never reports much less, whatever
    watched clock it read; one that read any other clock reports real time, far less. None on a real leg, where
    only the machine's clock could tell, and a verdict must not depend on it."""
    if virtual_host_clock(device) is None:
        return None
    with device_in_virtual_time(device, PRODUCT_US), Span(device) as span:
        for _ in range(2):
            a @ b
    return span.seconds() / 2


def test_clock_is_read_with_the_device_idle(submission, device):
    result, reads, done, *_ = run(submission, device)
    busy = [i for i, (was_idle, *_) in enumerate(reads) if not was_idle]
    if busy:
        which = "first" if busy[0] == 0 else "last" if busy[0] == len(reads) - 1 else f"read {busy[0] + 1} of the"
        fail(f"time_matmul read the clock {len(reads)} times; the {which} read came while {device} still had "
             f"queued work: " + FIX + cuda_only_note(submission, device))
    if not reads and not done:
        fail(f"time_matmul returned while {device} still had queued work and without reading a clock: if you "
             "time with device events, wait for the end event (end.synchronize()) before elapsed_time().")


def test_the_products_are_what_is_timed(submission, device):
    result, reads, done, m, span, repeats, operands = run(submission, device)
    if reads:
        between = reads[-1][1] - reads[0][1]
        if between < 1:
            fail(f"time_matmul ran no device work between its first and last clock reads ({len(reads)} reads): "
                 "the products must be inside the timed region.")
    if not result > 0:  # NaN is no duration either
        fail(f"time_matmul returned {result!r}: a duration is positive, in seconds.")
    one = product_seconds(*operands, device)  # only this check compares with it
    if one and result < one / 2:
        fail(f"time_matmul returned {result:.3g} s per product, while one product takes {one:.3g} s on {device} "
             "(measured by the grader with device events on the simulated device's virtual clock, which the host "
             "clocks read in the grader also follow), so what was timed is not the products: " + FIX
             + cuda_only_note(submission, device))
    # The products cannot take longer than the timed part of the call: twice as long is a total instead of a
    # mean, a thousand times a result in ms. Not on the CPU leg, which has no events and where CPU time counts
    # every core's matmul threads; the accelerator legs, run on every machine, judge it.
    call, clock = timed(reads, span) if device.type != "cpu" else (None, "")
    if call and result * repeats > 2 * call:
        fail(f"time_matmul returned {result:.3g} per product, {result * repeats:.3g} for the {repeats} products, "
             f"while the timed part of the call took {call:.3g} s by {clock}: return the seconds one "
             "product takes, the total divided by repeats (elapsed_time() of device events is in milliseconds, "
             "perf_counter_ns() in nanoseconds).")
