"""Grader for per_row_loss: a per-example weighted loss must be one batched computation. Counted with
measure(): the operations launched on the device must not grow with the batch size ("whatever its size": a
batch of more than a thousand rows, so a loop over chunks of any usual size shows), and nothing may be copied
to the CPU; on every leg (the CPU counts its operations the same way). Every float dtype of the logits is
tried: half and bfloat16 logits of a realistic size (around 12) overflow a cross-entropy written with a bare
exp() in float16."""

import random

import torch
import torch.nn.functional as F

from grader.engine.expect import expect_close, expect_device, fail, measure, running

FIX = ('compute every row at once: F.cross_entropy(logits, targets, reduction="none") gives the (B,) '
       "losses, then weight them and take the mean, with no Python loop over the rows")


SMALL, LARGE = (3, 5), (1100, 1500)  # rows: LARGE is more than any chunk a loop might take (1024 included)
TOLERANCE = {torch.float16: 2e-2, torch.bfloat16: 5e-2, torch.float32: 1e-4, torch.float64: 1e-6}


def batch(rows, classes, device, requires_grad=False, dtype=torch.float32):
    offsets = torch.empty(rows, 1).uniform_(-12, 12)  # a row's logits may all be large: CE does not change
    offsets[random.randrange(rows)] = random.uniform(12, 14)  # one row's exp() overflows float16 (above 65504)
    logits = (torch.randn(rows, classes) * 2 + offsets).to(dtype)
    targets = torch.randint(0, classes, (rows,))
    weights = (torch.rand(rows) * 2).to(dtype)
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


def test_keeps_working_in_every_float_dtype(submission, device):
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        cpu, dev = batch(random.randint(5, 12), random.randint(3, 7), device, dtype=dtype)
        name = str(dtype).removeprefix("torch.")
        out = call(submission, device, dev, f"weighted_loss on {name} logits on {device}")
        expect_device(out, device, f"the loss returned for {name} logits",
                      "compute it from the inputs, where they are.")
        if not out.is_floating_point() or out.dim() != 0:
            fail(f"weighted_loss should return one float number (shape ()) for {name} logits, but returned a "
                 f"{str(out.dtype).removeprefix('torch.')} tensor of shape {tuple(out.shape)}.")
        if out.dtype == torch.float64 and dtype != torch.float64:
            fail(f"weighted_loss returned a float64 loss for {name} logits: compute in the logits' dtype (or "
                 "float32, as autocast does); float64 does not exist on every accelerator (MPS has none).")
        if not torch.isfinite(out).all():
            fail(f"weighted_loss returned {out.item()} for {name} logits of a realistic size (up to about 16): an "
                 "exp() of a large logit overflowed (float16 holds at most 65504, exp(11.1) already). Let "
                 "F.cross_entropy or torch.logsumexp do it: they subtract each row's largest logit first.")
        tol = TOLERANCE[dtype]
        expect_close(out.double(), reference(*cpu), f"weighted_loss of {name} logits (values around 12, as "
                     "real logits can be)", atol=tol, rtol=tol)


def operations(submission, device, rows, classes):
    _, dev = batch(rows, classes, device)
    with measure(device) as m:
        call(submission, device, dev)
    if m.waits:
        fail(f"weighted_loss on a batch of {rows} rows made {m.describe_waits()}: the loss needs no "
             f"help from the CPU. To fix it, {FIX}.")
    return m.kernels


def test_work_does_not_grow_with_the_batch(submission, device):
    # Small batches first: a loop over the rows shows there at once. A loop over chunks shows only on a batch
    # larger than its chunk, which is run once the small ones agree (a row loop over it would take seconds).
    classes, small = random.randint(3, 7), random.randint(*SMALL)
    counts = {rows: operations(submission, device, rows, classes) for rows in (small, 4 * small)}
    if counts[4 * small] == counts[small]:
        large = random.randint(*LARGE)
        counts[large] = operations(submission, device, large, classes)
    (few, least), (many, most) = min(counts.items()), max(counts.items())
    if most > least:
        fail(f"weighted_loss launched {least} operations on {device} for a batch of {few} rows and {most} for "
             f"{many} rows: the work grows with the batch, as a Python loop over its rows (or over chunks of "
             f"them) does. To fix it, {FIX}.")
