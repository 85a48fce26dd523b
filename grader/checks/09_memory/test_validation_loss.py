"""Grader for validation_loss: a running total must not keep every batch's autograd graph alive.

Checked on every leg with a fresh model (with dropout, handed over in training mode) and batches: the value
equals a reference computed on the CPU in eval mode; it is a Python float or a 0-dim tensor; it
carries no autograd graph (no grad_fn, no requires_grad), which is what keeps the activations alive. On an
accelerator, device memory is measured with `measure` (peak allocated bytes, read from the device module
on CUDA and the simulator alike) and with memory_allocated: the peak for 24 batches may exceed the peak for
4 batches by less than one batch's activations, and the value returned may keep no activations alive. On
the CPU there is no device memory to read, so the graph check alone applies there."""

import copy
import random

import torch
import torch.nn.functional as F
from torch import nn

from grader.engine.expect import fail, measure, running, within

FIX = ("total += loss keeps every batch's autograd graph, and the activations it saved, alive for as long as "
       "total lives: add loss.item() (or loss.detach()), or run the loop under torch.no_grad().")


def setup(device, n_batches, width=None, batch=None):
    width = width or random.randint(96, 160)
    batch = batch or random.randint(48, 96)
    classes = random.randint(3, 6)
    # With dropout, as validated models have: in training mode (the state training leaves it in) the loss is
    # random, so a loop that drops model.eval() gives another value on every leg.
    model = nn.Sequential(nn.Linear(16, width), nn.ReLU(), nn.Dropout(0.5), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, classes))
    with torch.no_grad():  # confident logits: left active, dropout moves the loss by 3% or more (300 draws)
        model[-1].weight.mul_(10)
    model = model.to(device).train()
    batches = [(torch.randn(batch, 16, device=device), torch.randint(classes, (batch,), device=device))
               for _ in range(n_batches)]
    return model, batches, width, batch


def reference(model, batches):
    m = copy.deepcopy(model).cpu().eval()
    with torch.no_grad():
        return sum(F.cross_entropy(m(x.cpu()), y.cpu()).item() for x, y in batches) / len(batches)


def call(submission, model, batches, device):
    with running(f"validation_loss(model, {len(batches)} batches) on {device}", submission):
        return submission.validation_loss(model, batches)


def as_number(value, what="validation_loss's result"):
    if isinstance(value, torch.Tensor):
        if value.dim() != 0:
            fail(f"{what} should be one number (a Python float or a 0-dim tensor), got a tensor of shape "
                 f"{tuple(value.shape)}.")
        return value.detach().cpu().item()
    if isinstance(value, (int, float)):
        return float(value)
    fail(f"{what} should be a number, got {type(value).__name__}.")


def shorten_last_batch(model, batches, gap=5e-3):
    """Cut the last batch short, as a loader's often is: the mean of the batch means is asked. Cut it where the
    mean over samples differs from that by `gap` (30 times the tolerance) or more, so that returning the other
    mean fails on every draw: with a last batch nearly full, or as hard as the others, the two agree closely
    (a wrong fix passed a simulated leg on 2 x H100, fifteenth session)."""
    m = copy.deepcopy(model).cpu().eval()
    with torch.no_grad():
        means = [F.cross_entropy(m(x.cpu()), y.cpu()).item() for x, y in batches[:-1]]
        x, y = batches[-1]
        last = F.cross_entropy(m(x.cpu()), y.cpu(), reduction="none")
    full = len(y)  # setup makes every batch this size

    def apart(cut):
        tail = last[:cut].mean().item()
        of_batches = (sum(means) + tail) / len(batches)
        of_samples = (sum(means) * full + tail * cut) / (full * len(means) + cut)
        return abs(of_batches - of_samples)

    cuts = random.sample(range(1, full), full - 1)
    cut = next((c for c in cuts if apart(c) >= gap), None) or max(cuts, key=apart)
    batches[-1] = (x[:cut], y[:cut])


def test_mean_loss_without_a_graph(submission, device):
    model, batches, _, _ = setup(device, random.randint(3, 6))
    shorten_last_batch(model, batches)
    expected = reference(model, batches)
    value = call(submission, model, batches, device)
    frozen = [name for name, p in model.named_parameters() if not p.requires_grad]
    if frozen:
        fail(f"after validation_loss the model's parameters {', '.join(frozen[:3])} no longer require grad: the "
             "next training step cannot compute their gradients. Leave the model as it was: run the loop under "
             "torch.no_grad() (or add loss.item()) instead.")
    if isinstance(value, torch.Tensor) and (value.grad_fn is not None or value.requires_grad):
        fail(f"validation_loss returned a tensor with grad_fn={type(value.grad_fn).__name__}: it still holds the "
             f"autograd graph of all {len(batches)} batches. " + FIX)
    got = as_number(value)
    if not within(got, expected, 1e-4 * max(1.0, abs(expected))) and model.training:
        fail(f"validation_loss returned {got:.5f}, but the mean loss of the model in eval mode is {expected:.5f}: "
             "the model was left in training mode, so its dropout layers dropped random activations during "
             "validation. Call model.eval() before the loop.")
    if not within(got, expected, 1e-4 * max(1.0, abs(expected))):
        fail(f"validation_loss returned {got:.5f}, but the mean loss is {expected:.5f}: the fix changed the result.")


def test_memory_does_not_grow_with_the_batches(submission, device):
    if device.type == "cpu":
        return  # no device memory to measure on the CPU; the graph check above covers this leg
    mod = torch.get_device_module(device)
    width, batch = random.randint(256, 384), random.randint(128, 256)
    activation = batch * width * 4
    results = {}
    for n in (4, 24):
        model, batches, _, _ = setup(device, n, width, batch)
        with torch.no_grad():  # warm-up: libraries' one-time workspaces (cuBLAS) must not count as the loop's
            F.cross_entropy(model(batches[0][0]), batches[0][1])
        before = mod.memory_allocated(device)
        with measure(device) as m:
            value = call(submission, model, batches, device)
        kept = mod.memory_allocated(device) - before
        results[n] = (m.peak_bytes - before, kept)
        del value
    (peak4, _), (peak24, kept24) = results[4], results[24]
    if kept24 > activation:
        fail(f"the value validation_loss returned for 24 batches keeps {kept24 / 2**20:.1f} MiB of {device} memory "
             "alive: " + FIX)
    if peak24 - peak4 > activation:
        fail(f"validation_loss needed {peak4 / 2**20:.1f} MiB of {device} memory (peak) for 4 batches and "
             f"{peak24 / 2**20:.1f} MiB for 24: its memory grows with the number of batches. " + FIX)
