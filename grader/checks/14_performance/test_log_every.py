"""Grader for log_every: the loss may be read back to Python only for the logged steps, and the fit must be
the same gradient descent, on the device.

The reads are counted over a fit of well over a hundred steps, so that a read every N steps besides the log's
(a convergence test every 100 steps) shows whatever N; the log must hold Python ints and floats."""

import math
import random

import torch

from grader.engine.expect import expect_close, expect_device, fail, measure, running, within


def draw(long=False):
    """Fresh data; `long`: a fit of well over a hundred steps, longer than any period at which a learner might
    read the loss besides the log's (a convergence test every 100 steps)."""
    n, f = random.randint(40, 80), random.randint(3, 6)
    X = torch.randn(n, f)
    y = X @ torch.randn(f) + 0.1 * torch.randn(n)
    if long:
        return X, y, random.randint(105, 120), 0.05, random.choice([30, 40, 45])  # step 100 is never logged
    steps, log_every = random.randint(40, 70), random.choice([10, 15, 20])
    return X, y, steps, 0.05, log_every


def reference(X, y, steps, lr, log_every):
    X, y = X.double(), y.double()
    w = torch.zeros(X.shape[1], dtype=torch.float64)
    log = []
    for step in range(steps):
        residual = X @ w - y
        if step % log_every == 0:
            log.append((step, (residual ** 2).mean().item()))
        w = w - lr * (2.0 / X.shape[0]) * (X.T @ residual)
    return w, log


def call(submission, device, X, y, steps, lr, log_every):
    with running(f"fit(X, y, steps={steps}, lr={lr}, log_every={log_every}) on {device}", submission):
        out = submission.fit(X.to(device), y.to(device), steps, lr, log_every)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"fit should return (w, log), got {type(out).__name__}.")
    return out


def test_fits_the_same_weights_on_the_device(submission, device):
    X, y, steps, lr, log_every = draw()
    w, _ = call(submission, device, X, y, steps, lr, log_every)
    expect_device(w, device, "the fitted w", "keep the weights where X and y are.")
    expect_close(w, reference(X, y, steps, lr, log_every)[0].float(), "the fitted w", atol=1e-4, rtol=1e-4)


def test_logs_the_documented_steps(submission, device):
    X, y, steps, lr, log_every = draw()
    _, log = call(submission, device, X, y, steps, lr, log_every)
    _, expected = reference(X, y, steps, lr, log_every)
    try:
        got = [(int(s), float(v)) for s, v in log]
    except (TypeError, ValueError, RuntimeError):
        fail(f"the log should be a list of (step, loss) pairs of Python numbers, got {log!r:.100}.")
    odd = [s for s, _ in log if isinstance(s, bool) or not isinstance(s, int)]
    if odd:
        fail(f"the steps in the log should be Python ints, got {type(odd[0]).__name__} values: log the loop's own "
             "step counter.")
    if [s for s, _ in got] != [s for s, _ in expected]:
        fail(f"the log holds steps {[s for s, _ in got]}, expected {[s for s, _ in expected]} "
             f"(every log_every={log_every} steps from 0).")
    for (s, v), (_, e) in zip(got, expected):
        if not within(v, e, 1e-4 + 1e-4 * abs(e)):
            early = (" A NaN there is what a copy to the host with non_blocking=True gives when it is read before the "
                     "device has run it (the simulator leaves such a buffer NaN): synchronize before reading, or "
                     "read with .item() / .tolist()." if math.isnan(v) else "")
            fail(f"the loss logged at step {s} is {v:.6g}, expected {e:.6g} (the loss before that step's update).{early}")
    if any(not isinstance(v, float) for _, v in log):
        fail("the losses in the log should be Python floats, not tensors: read the logged values with .tolist() "
             "or .item() (and only those).")


def test_reads_the_device_only_for_logged_steps(submission, device):
    X, y, steps, lr, log_every = draw(long=True)
    logged = len(range(0, steps, log_every))
    with measure(device) as m:
        call(submission, device, X, y, steps, lr, log_every)
    if m.waits > logged:
        fail(f"fit({steps} steps, log_every={log_every}) made {m.describe_waits()}, for {logged} logged "
             f"values: each read makes Python wait until {device} has finished all the work queued before it. "
             "Read the loss only at the steps you log, or keep the logged losses on the device and read them "
             "at the end with one .tolist().")
    if device.type != "cpu" and m.kernels < steps:  # each step is several kernels where X and y are
        fail(f"fit({steps} steps) ran {m.kernels} operations on {device}: the descent must run where X and y are, "
             "not on a copy of them on the CPU.")
