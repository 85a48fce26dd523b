"""Grader for per_row_loss: a per-example weighted loss must be one batched computation. Counted with
measure(): the operations launched on the device must not grow with the batch size, and nothing may be
copied to the CPU; on every leg (the CPU counts its operations the same way)."""

import random

import torch
import torch.nn.functional as F

from grader.expect import expect_close, expect_device, fail, measure, running

FIX = ('compute every row at once: F.cross_entropy(logits, targets, reduction="none") gives the (B,) '
       "losses, then weight them and take the mean, with no Python loop over the rows")


def batch(rows, classes, device, requires_grad=False):
    logits = torch.randn(rows, classes) * 2
    targets = torch.randint(0, classes, (rows,))
    weights = torch.rand(rows) * 2
    on_device = (logits.to(device).requires_grad_(requires_grad), targets.to(device), weights.to(device))
    return (logits, targets, weights), on_device


def reference(logits, targets, weights):
    log_probs = logits.double().log_softmax(dim=1)
    return -(weights.double() * log_probs[torch.arange(len(targets)), targets]).mean()


def call(submission, device, args, what=None):
    what = what or f"weighted_loss on a batch of {len(args[1])} rows on {device}"
    with running(what, submission, explain_device_error=f"every tensor you create must be on {device}."):
        return submission.weighted_loss(*args)


def test_gives_the_weighted_mean(submission, device):
    cpu, dev = batch(random.randint(5, 12), random.randint(3, 7), device)
    out = call(submission, device, dev)
    expect_device(out, device, "the loss returned by weighted_loss", "compute it from the inputs, where they are.")
    if out.dim() != 0:
        fail(f"weighted_loss should return one number (shape ()), but returned shape {tuple(out.shape)}.")
    if out.dtype != dev[0].dtype:
        fail(f"weighted_loss returned a {str(out.dtype).removeprefix('torch.')} loss for "
             f"{str(dev[0].dtype).removeprefix('torch.')} logits: keep the logits' dtype (float64 does not exist "
             "on every accelerator: MPS has none).")
    expect_close(out, reference(*cpu).float(), "weighted_loss(logits, targets, weights)")


def test_gradient_reaches_the_logits(submission, device):
    cpu, dev = batch(random.randint(5, 12), random.randint(3, 7), device, requires_grad=True)
    out = call(submission, device, dev)
    if not out.requires_grad:
        fail("the loss returned by weighted_loss is not connected to the logits: a training loss must let "
             "backward() reach the model (no .detach(), .item() or torch.tensor(...) of the value).")


def test_work_does_not_grow_with_the_batch(submission, device):
    classes, small = random.randint(3, 7), random.randint(3, 5)
    counts = {}
    for rows in (small, 4 * small):
        _, dev = batch(rows, classes, device)
        with measure(device) as m:
            call(submission, device, dev)
        if m.waits:
            fail(f"weighted_loss on a batch of {rows} rows made {m.describe_waits()}: the loss needs no "
                 f"help from the CPU. To fix it, {FIX}.")
        counts[rows] = m.kernels
    if counts[4 * small] > counts[small]:
        fail(f"weighted_loss launched {counts[small]} operations on {device} for a batch of {small} rows and "
             f"{counts[4 * small]} for {4 * small} rows: the work grows with the batch, as a Python loop over "
             f"its rows does. To fix it, {FIX}.")
