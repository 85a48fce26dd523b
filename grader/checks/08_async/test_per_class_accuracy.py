"""Grader for per_class_accuracy: a non_blocking copy to the CPU must be waited for before it is read.

A device-to-host copy with non_blocking=True lands in pinned memory when the device gets to it; the host
reads the buffer's old contents until then (the simulator shows NaN there, so that leftovers never equal the
answer by chance). To make that moment deterministic, the grader first queues
work that keeps the device busy (a long kernel on CUDA; on the simulated device, whose virtual clock runs
every kernel longer than its launch, a few operations), so an unsynchronised read always happens before
the copy has run, on CUDA and on the simulator alike. The learner's function runs with another device than
the leg's current (grader.expect.other_device_current), as every learner call does: a synchronisation without
a device argument waits for that other device, not for the copy, on both simulated legs and on two GPUs.

Checked on every leg: the values equal a reference computed on the CPU from fresh inputs, and the result
comes back in one round trip (counted by `measure`), not one read per class.

Limit: a submission that synchronises *before* its non_blocking copy and never after is caught for certain
on the simulator only; on a GPU the copy of a few bytes may land before Python reads it (a real race, which
the check cannot force). The shipped bug and the usual fixes do not depend on that race."""

import random

import torch

from grader.expect import fail, keep_busy, measure, other_device_current, running, within

FIX = ("the host read the result before the copy finished: a copy to the CPU with non_blocking=True returns "
       "before the device has run it. Wait for it (synchronize the device, or an event recorded after the copy) "
       "before reading, or copy without non_blocking.")


def batch(device):
    classes, size = random.randint(4, 8), random.randint(64, 160)
    labels = torch.randint(classes, (size,))
    logits = torch.randn(size, classes) + 2.0 * torch.nn.functional.one_hot(labels, classes)
    correct = (logits.argmax(1) == labels).double()
    expected = [correct[labels == c].mean().item() if (labels == c).any() else 0.0 for c in range(classes)]
    return logits.to(device), labels.to(device), classes, expected


def call(submission, device, logits, labels, classes):
    with other_device_current(device), running(f"per_class_accuracy(logits, labels, {classes}) on {device}",
                                                submission):
        keep_busy(device)  # on the leg's device, while another is current: a wait must name the device
        return submission.per_class_accuracy(logits, labels, classes)


def check_values(out, expected, classes):
    if isinstance(out, torch.Tensor):
        out = out.tolist()
    if not isinstance(out, (list, tuple)) or len(out) != classes:
        fail(f"per_class_accuracy should return a list of {classes} floats, got {type(out).__name__}"
             f"{' of length ' + str(len(out)) if isinstance(out, (list, tuple)) else ''}.")
    if any(not isinstance(v, (int, float)) for v in out):
        fail("per_class_accuracy should return Python floats (the list goes to the logger).")
    if not all(within(a, b, 1e-5) for a, b in zip(out, expected)):
        shown = ", ".join(f"{v:.3f}" for v in out)
        want = ", ".join(f"{v:.3f}" for v in expected)
        fail(f"per_class_accuracy returned [{shown}] but the accuracies are [{want}]: {FIX}")


def test_values_are_read_after_the_copy(submission, device):
    for _ in range(2):  # a second call may reuse the first call's pinned buffer: stale values must not pass
        logits, labels, classes, expected = batch(device)
        check_values(call(submission, device, logits, labels, classes), expected, classes)


def test_one_round_trip(submission, device):
    logits, labels, classes, expected = batch(device)
    with measure(device) as m:
        out = call(submission, device, logits, labels, classes)
    check_values(out, expected, classes)
    if m.round_trips > 1:
        fail(f"per_class_accuracy made {m.describe_round_trips()}: each makes the host wait for {device}. Copy "
             "the whole accuracy vector once and read it on the host.")
