"""Grader for validate_anywhere, the capstone of "Inside the accelerator": the CPU's mean loss, computed on the
device it is given (its index kept) without autograd, in float32, and read once, after it has arrived.

One validation per leg (a fresh draw; the checks below read it), with a model that has dropout, so that a
model left in training mode gives another loss, and enough batches that a per-batch wait shows."""

import copy
import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from grader.engine.expect import (GradeFailure, canonical, fail, forward_passes, measure, once_per_leg,
                           refuse_unawaited_reads, running, within)


def draw():
    f, c, width = random.randint(8, 16), random.randint(3, 6), random.randint(32, 64)
    model = nn.Sequential(nn.Linear(f, width), nn.ReLU(), nn.Dropout(0.5), nn.Linear(width, c))
    batches = [(torch.randn(b, f), torch.randint(0, c, (b,)))
               for b in [random.randint(24, 48) for _ in range(random.randint(20, 30))]]
    with torch.no_grad():
        expected = sum(F.cross_entropy(copy.deepcopy(model).eval()(x), y).item() for x, y in batches) / len(batches)
    return model, batches, expected


@dataclass
class Validated:
    expected: float
    batches: int
    forwards: list  # each forward pass of the model (grader.engine.expect.Forward: its input's device, autograd on?)
    result: object
    m: object


@once_per_leg
def validated(submission, device) -> Validated:
    model, batches, expected = draw()
    try:
        with forward_passes(model) as forwards, measure(device) as m, \
                running(f"validate(model, {len(batches)} batches, {str(device)!r})", submission):
            result = submission.validate(model, batches, device)
    except GradeFailure as exc:
        text = str(exc)
        if "same device" in text and device.index not in (None, 0):
            text += (f"\nOne operand is on another {device.type} device than {device}: a device without its "
                     "index (device.type, \"cuda\") means the current device, not the one validate is given. "
                     "Make every tensor with device=device.")
        if "float64" in text:
            text += "\nMPS has no float64: keep the total in float32, the dtype of the losses."
        raise GradeFailure(text) from None
    return Validated(expected, len(batches), forwards, result, m)


def test_gives_the_mean_loss_of_the_cpu(submission, device):
    t = validated(submission, device)
    if not isinstance(t.result, float):
        fail(f"validate should return a Python float, got {type(t.result).__name__}: read the result with .item().")
    refuse_unawaited_reads(t.m, "validate")
    if not within(t.result, t.expected, 1e-4 + 1e-4 * abs(t.expected)):
        fail(f"validate returned {t.result!r}; the mean of the batches' losses is {t.expected:.6g}. Is the model in "
             "eval mode (its dropout off)?")


def test_runs_on_the_device_without_autograd(submission, device):
    t = validated(submission, device)
    elsewhere = sorted({str(f.device) for f in t.forwards
                        if f.device is None or canonical(f.device) != canonical(device)})
    if len(t.forwards) < t.batches or elsewhere:
        fail(f"validate(..., {str(device)!r}) ran the model on {', '.join(elsewhere) or 'fewer batches than given'}: "
             "run every batch on the device it is given.")
    if any(f.grad for f in t.forwards):
        fail("validate ran the model with autograd on: each batch's loss then holds its graph, and a running total "
             "of those losses keeps every batch's activations alive until the end (device memory grows with the "
             "number of batches). Validate under torch.no_grad() (or torch.inference_mode()).")


def test_keeps_float32_on_the_device(submission, device):
    t = validated(submission, device)
    if t.m.float64:
        fail(f"validate made {t.m.describe_float64()}: the model and its losses are float32, and MPS has no "
             "float64 at all (making one there raises). Keep the total in float32.")


def test_python_waits_once(submission, device):
    t = validated(submission, device)
    if t.m.waits > 1:
        fail(f"validate({t.batches} batches) made {t.m.describe_waits()}: each makes Python wait for {device}. "
             "Keep the total on the device and read it once, at the end.")
