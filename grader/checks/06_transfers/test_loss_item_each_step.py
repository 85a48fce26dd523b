"""Grader for loss_item_each_step: a training epoch must read the loss from the device once, not per step.
Counted with measure(): copies to the CPU plus reads of device values by Python (print(loss) among them), on
every leg."""

import copy
import random

import torch
import torch.nn.functional as F
from torch import nn

from grader.expect import expect_close, fail, measure, running, within

FIX = ("accumulate the loss on the device (a tensor: total += loss.detach() * len(y)) and read it once, "
       "after the loop")


def problem(device):
    features, classes = random.randint(4, 8), random.randint(3, 6)
    model = nn.Sequential(nn.Linear(features, 16), nn.Tanh(), nn.Linear(16, classes))
    sizes = [random.randint(6, 10)] * random.randint(5, 8) + [random.randint(1, 5)]   # a short last batch
    batches = [(torch.randn(n, features), torch.randint(0, classes, (n,))) for n in sizes]
    reference = copy.deepcopy(model)
    model.to(device)
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), batches, reference


def reference_epoch(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    total, seen = 0.0, 0
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += float(loss.detach()) * len(y)
        seen += len(y)
    return total / seen


def epoch(submission, device, model, optimizer, batches):
    what = f"train_epoch(model, optimizer, batches, {str(device)!r}) with {len(batches)} batches"
    with running(what, submission, explain_device_error=f"every tensor of the step must be on {device}."):
        return submission.train_epoch(model, optimizer, batches, device)


def test_returns_the_mean_loss(submission, device):
    model, optimizer, batches, ref_model = problem(device)
    out = epoch(submission, device, model, optimizer, batches)
    expected = reference_epoch(ref_model, batches)
    if isinstance(out, torch.Tensor) or not isinstance(out, (float, int)):
        kind = f"a tensor on {out.device}" if isinstance(out, torch.Tensor) else f"a {type(out).__name__}"
        fail(f"train_epoch should return the mean loss as a Python float, for the log, but it returned {kind}: "
             "read the device total once, at the end, with .item().")
    if not within(out, expected, 1e-4 * max(1.0, abs(expected))):
        fail(f"train_epoch returned a mean loss of {out:.6f}; the mean cross-entropy over the epoch's "
             f"{sum(len(y) for _, y in batches)} examples is {expected:.6f}. Weight each batch by its size "
             "(the last one is smaller) and divide by the number of examples.")


def test_trains_the_model(submission, device):
    model, optimizer, batches, ref_model = problem(device)
    epoch(submission, device, model, optimizer, batches)
    reference_epoch(ref_model, batches)
    for (name, p), q in zip(model.named_parameters(), ref_model.parameters()):
        expect_close(p, q, f"parameter {name} after one epoch", atol=1e-4, rtol=1e-3)


def test_reads_the_device_once_per_epoch(submission, device):
    model, optimizer, batches, _ = problem(device)
    with measure(device) as m:
        epoch(submission, device, model, optimizer, batches)
    if m.waits > 1:
        printing = (" Printing a device tensor reads its values as .item() does: print the mean once, after the "
                    "loop." if m.printed else "")
        fail(f"one epoch of {len(batches)} steps made {m.describe_waits()}; it needs one, at the end. "
             f"Each one makes Python wait until {device} has finished the step. To fix it, {FIX}.{printing}")
