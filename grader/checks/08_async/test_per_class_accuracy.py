"""Grader for per_class_accuracy: a non_blocking copy to the CPU must be waited for before it is read.

A device-to-host copy with non_blocking=True lands in pinned memory when the device gets to it; the host
reads the buffer's old contents until then (the simulator shows NaN there, so that leftovers never equal the
answer by chance). To make that moment deterministic, the grader first queues
work that keeps the device busy (a long kernel on CUDA; on the simulated device, whose virtual clock runs
every kernel longer than its launch, a few operations), so an unsynchronised read always happens before
the copy has run, on CUDA and on the simulator alike. The learner's function runs with another device than
the leg's current (grader.engine.expect.other_device_current), as every learner call does: a synchronisation without
a device argument waits for that other device, not for the copy, on both simulated legs and on two GPUs.

Checked on every leg: the values equal a reference computed on the CPU from fresh inputs, with logits of every
float dtype (float32, float64, float16, bfloat16), one class always absent from the batch (0.0 is promised for
it, not NaN); the result is a list of Python floats (not a tensor, nor 0-dim tensors) and comes back in one
round trip (counted by `measure`), not one read per class. Where the values are wrong on an accelerator other
than CUDA and the file synchronises through torch.cuda, the message says that torch.cuda waits for CUDA only.

Limit: a submission that synchronises *before* its non_blocking copy and never after is caught for certain
on the simulator only; on a GPU the copy of a few bytes may land before Python reads it (a real race, which
the check cannot force). The shipped bug and the usual fixes do not depend on that race."""

import linecache
import math
import random
import re

import torch

from grader.engine.expect import fail, keep_busy, measure, other_device_current, refuse_unawaited_reads, running, within

FIX = ("the host read the result before the copy finished: a copy to the CPU with non_blocking=True returns "
       "before the device has run it. Wait for it (synchronize the device, or an event recorded after the copy) "
       "before reading, or copy without non_blocking.")
CUDA_ONLY = ("\nYour file waits with torch.cuda only: torch.cuda.is_available() is False and torch.cuda.synchronize() "
             "waits for nothing on {device} (as on MPS or XPU); torch.accelerator.synchronize(device) waits for any "
             "accelerator.")
# Every float dtype the contract's "float tensor (B, C)" allows, with the tolerance its precision gives the fractions.
DTYPES = {torch.float32: 1e-5, torch.float64: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def batch(device, dtype=torch.float32, classes=None):
    """Fresh logits and labels (of `classes` classes, else a random count); one class (at least) is absent from the
    batch, as the docstring names."""
    classes, size = classes or random.randint(4, 8), random.randint(64, 160)
    absent = random.randrange(classes)
    present = [c for c in range(classes) if c != absent]
    labels = torch.tensor(present)[torch.randint(len(present), (size,))]
    logits = (torch.randn(size, classes) + 2.0 * torch.nn.functional.one_hot(labels, classes)).to(dtype)
    correct = (logits.argmax(1) == labels).double()
    expected = [correct[labels == c].mean().item() if (labels == c).any() else 0.0 for c in range(classes)]
    return logits.to(device), labels.to(device), classes, expected


def call(submission, device, logits, labels, classes):
    dtype = str(logits.dtype).removeprefix("torch.")
    with other_device_current(device), running(f"per_class_accuracy(logits of {dtype}, labels, {classes}) on "
                                                f"{device}", submission):
        keep_busy(device)  # on the leg's device, while another is current: a wait must name the device
        return submission.per_class_accuracy(logits, labels, classes)


def waits_with_cuda_only(submission) -> bool:
    """Whether the file synchronises through torch.cuda (a hint for the message only; the verdict is behaviour)."""
    source = "".join(linecache.getlines(submission.filename))
    return re.search(r"cuda\.(synchronize|is_available|current_stream|Event)", source) is not None


def check_values(out, expected, classes, labels, submission=None, device=None, tol=1e-5):
    if isinstance(out, torch.Tensor):
        fail(f"per_class_accuracy returned a tensor ({out.device}); it should return a list of {classes} Python "
             "floats, which the logger takes: read the values with .tolist().")
    if not isinstance(out, (list, tuple)) or len(out) != classes:
        fail(f"per_class_accuracy should return a list of {classes} floats, got {type(out).__name__}"
             f"{' of length ' + str(len(out)) if isinstance(out, (list, tuple)) else ''}.")
    odd = [v for v in out if isinstance(v, bool) or not isinstance(v, (int, float))]
    if odd:
        kind = "0-dim tensors" if isinstance(odd[0], torch.Tensor) else f"{type(odd[0]).__name__} values"
        fail(f"per_class_accuracy should return Python floats (the list goes to the logger), but the list holds "
             f"{kind}: read the values on the host with .tolist().")
    seen = set(labels.cpu().tolist())
    absent = [c for c in range(classes) if c not in seen and not within(out[c], 0.0, tol)]
    if absent and all(math.isnan(out[c]) for c in absent) and not all(math.isnan(v) for v in out):
        fail(f"class {absent[0]} is absent from the batch, and per_class_accuracy gave {out[absent[0]]} for it; the "
             "docstring promises 0.0 for a class absent from the batch (divide by the count clamped to 1, or use "
             "torch.where).")
    if not all(within(a, b, tol) for a, b in zip(out, expected)):
        shown = ", ".join(f"{v:.3f}" for v in out)
        want = ", ".join(f"{v:.3f}" for v in expected)
        hint = CUDA_ONLY.format(device=device) if (
            submission is not None and device.type not in ("cpu", "cuda") and waits_with_cuda_only(submission)) else ""
        fail(f"per_class_accuracy returned [{shown}] but the accuracies are [{want}]: {FIX}{hint}")


def test_values_are_read_after_the_copy(submission, device):
    classes = random.randint(4, 8)
    for _ in range(2):  # a second call of the same size may reuse the first call's pinned buffer: stale values must
        logits, labels, classes, expected = batch(device, classes=classes)  # not pass
        with measure(device) as m:
            out = call(submission, device, logits, labels, classes)
        check_values(out, expected, classes, labels, submission, device)
        # A GPU often lands a copy of a few floats before the host reads it (a wait inside the call, bincount's,
        # drained the queue), so the race is refused where it is made, on every leg, not where it happens to show.
        refuse_unawaited_reads(m, "per_class_accuracy", "per_class_accuracy read a non_blocking copy to the CPU that "
                               f"nothing waited for (its values happened to have landed this time): {FIX}")


def test_every_float_dtype(submission, device):
    for dtype, tol in DTYPES.items():  # float16 and bfloat16 too: logits of a mixed-precision model
        if dtype == torch.float64 and device.type == "mps":
            continue  # MPS has no float64
        logits, labels, classes, expected = batch(device, dtype)
        check_values(call(submission, device, logits, labels, classes), expected, classes, labels, submission,
                     device, tol)


def test_one_round_trip(submission, device):
    logits, labels, classes, expected = batch(device)
    with measure(device) as m:
        out = call(submission, device, logits, labels, classes)
    check_values(out, expected, classes, labels, submission, device)
    if m.round_trips > 1:
        fail(f"per_class_accuracy made {m.describe_round_trips()}: each makes the host wait for {device}. Copy "
             "the whole accuracy vector once and read it on the host.")
