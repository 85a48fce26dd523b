"""Grader for cuda_only_fast_path: the model must run on whatever device it is given, not only on "cuda".

Checked on every leg with a fresh model (with dropout, handed over in training mode, so that predictions need
model.eval()) and batches: the model's parameters end on the device and its operations run there, for a
torch.device and for a device name; the predictions are int64, on the device, equal to the CPU's in eval mode;
nothing is read back to the host."""

import copy
import random

import torch
from torch import nn

from grader.engine.expect import expect_device, expect_tensor, fail, measure, running

FIX = ("predict took the CPU path on {device}: a test such as str(device) == 'cuda' (or device.type == 'cuda') "
       "sends every other accelerator, and every other GPU index, down the CPU branch. Move the model and the batches with .to(device) whatever the device is; if a branch is really "
       "needed, test device.type != 'cpu'.")


def draw():
    f, h, c = random.randint(4, 9), random.randint(8, 16), random.randint(3, 6)
    # With dropout, handed over in training mode (as a training loop leaves it): predictions need model.eval().
    model = nn.Sequential(nn.Linear(f, h), nn.ReLU(), nn.Dropout(0.5), nn.Linear(h, c)).train()
    # Dozens of samples: a dropout left active (no model.eval()) flips some prediction on every draw.
    batches = [torch.randn(random.randint(16, 40), f) for _ in range(random.randint(2, 4))]
    return model, batches


def reference(model, batches):
    with torch.no_grad():
        logits = torch.cat([copy.deepcopy(model).eval()(x) for x in batches])
    top2 = logits.topk(2, dim=1).values
    clear = (top2[:, 0] - top2[:, 1]) > 1e-4        # ignore near-ties, which rounding may flip
    return logits.argmax(dim=1), clear


def call(submission, model, batches, device, as_given):
    with running(f"predict(model, batches, {as_given!r})", submission,
                 explain_device_error=FIX.format(device=device)):
        out = submission.predict(model, batches, as_given)
    return expect_tensor(out, "the value predict returns")


def test_model_runs_on_the_device(submission, device):
    model, batches = draw()
    with measure(device) as m:
        out = call(submission, model, batches, device, torch.device(device))
    params = {str(p.device) for p in model.parameters()}
    if device.type != "cpu" and ("cpu" in params or m.kernels < len(batches)):
        fail(FIX.format(device=device) + f" (after the call the model's parameters are on {', '.join(sorted(params))}, "
             f"and {m.kernels} operations ran on {device} for {len(batches)} batches.)")
    expect_device(out, device, "the predictions", "return them where the model ran.")


def test_accepts_a_device_name(submission, device):
    model, batches = draw()
    out = call(submission, model, batches, device, str(device))
    if device.type != "cpu" and any(p.device.type == "cpu" for p in model.parameters()):
        fail(FIX.format(device=device) + f" (called with the string {str(device)!r}, the model stayed on the CPU.)")
    expect_device(out, device, f"the predictions for device {str(device)!r}", "return them where the model ran.")


def test_predictions_are_right(submission, device):
    model, batches = draw()
    expected, clear = reference(model, batches)
    out = call(submission, model, batches, device, device)
    if out.shape != expected.shape:
        fail(f"predict returned shape {tuple(out.shape)}; expected one class per sample, {tuple(expected.shape)}.")
    if out.dtype != torch.int64:
        fail(f"predict returned {out.dtype}; class indices are int64 (argmax gives them).")
    if not torch.equal(out.cpu()[clear], expected[clear]) and model.training:
        fail("predict returned the wrong classes: the model was left in training mode, so its dropout layers "
             "dropped random activations while predicting. Call model.eval() before the loop.")
    if not torch.equal(out.cpu()[clear], expected[clear]):
        fail("predict returned the wrong classes: the fix changed what the model computes.")


def test_no_copies_back_to_the_cpu(submission, device):
    model, batches = draw()
    model.to(device)
    with measure(device) as m:
        call(submission, model, batches, device, device)
    if m.waits:
        fail(f"predict made {m.describe_waits()}: " + FIX.format(device=device))
