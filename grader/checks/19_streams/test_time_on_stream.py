"""Grader for time_on_stream: two events recorded on the stream that runs the work measure it.

Judged by the number, on the device's own clock: the grader's work spins its stream for W = 10 ms (at most 2 GHz:
between 10 and about 15 ms on a GPU, 13.3 ms on the simulator's virtual clock, more with its few small kernels),
and before the call the grader queues P = 60 ms of other work on the same stream. A right measurement lies
between 0.9 W and W + P/2: events on the current stream, which had nothing to do, measure a few microseconds;
a start event reached before the earlier work (recorded on the current stream, or before the call) counts P
too. Open: an answer timed by a host clock around synchronisations reads real time, in which the simulated work
takes none (it fails there) while a GPU's takes 10 ms or more; time_matmul's watched clocks
(grader/checks/08_async/test_time_matmul.py) would answer it from the virtual clock here too."""

import torch

from grader.engine.expect import expect_close, expect_tensor, fail, running, spin

WORK_MS, EARLIER_MS = 10.0, 60.0


def work(x):
    spin(x.device, WORK_MS)
    return x * 2 + 1


def run(submission, device):
    """The learner's measurement of work(x) on a side stream that has P ms of earlier work queued."""
    x = torch.randn(int(torch.randint(3, 9, ())), 4)
    xd = x.to(device)
    stream = torch.Stream(device)
    with stream:
        spin(device, EARLIER_MS)
    with running("time_on_stream(work, x, stream)", submission):
        result = submission.time_on_stream(work, xd, stream)
    if not isinstance(result, tuple) or len(result) != 2:
        fail(f"time_on_stream(...) returned {type(result).__name__}: return a pair, (work(x), milliseconds).")
    return x, result


def test_measures_the_work_on_its_stream(submission, device):
    _, (_, ms) = run(submission, device)
    try:
        ms = float(ms)
    except (TypeError, ValueError):
        fail(f"time_on_stream(...) returned {type(ms).__name__} as its time: return a number of milliseconds.")
    if not ms >= 0.9 * WORK_MS:
        fail(f"time_on_stream(...) reported {ms:.3f} ms for work that keeps its stream busy at least {WORK_MS:.0f} "
             "ms: the events measured the current stream, which had nothing to do meanwhile. An event marks a point "
             "in one stream's queue: record start and end on the stream the work runs on.")
    if not ms <= WORK_MS + EARLIER_MS / 2:
        fail(f"time_on_stream(...) reported {ms:.1f} ms for work that takes {WORK_MS:.0f} to 15 ms: the time "
             f"includes the {EARLIER_MS:.0f} ms of work queued on the stream before the call. Start the "
             "measurement at the point where the work enters the stream: record start on the stream, just "
             "before the work.")


def test_returns_the_result_ready_to_use(submission, device):
    x, (out, _) = run(submission, device)
    out = expect_tensor(out, "time_on_stream(...)'s result").cpu()
    if out.shape == x.shape and not torch.allclose(out, x * 2 + 1, atol=1e-5, rtol=1e-5):
        fail("time_on_stream(...)'s result, read on the current stream after the call, was not work(x): the work on "
             "`stream` had not written it yet, and nothing ordered the read after it. Wait for an end event "
             "recorded on `stream` after the work (or make the current stream wait for `stream`) before returning.")
    expect_close(out, x * 2 + 1, "time_on_stream(...)'s result")
