"""Grader for fit_standardized, the capstone of "Where tensors live": the model owns its statistics (buffers
that move and save with it), every step trains on the device it is given, the CPU's model comes out, and
Python reads the device once.

One training per leg (a fresh draw; the checks below read it). The data are larger than any batch a learner
might cut, and the steps more than a few, so that a per-step read shows."""

import random
import re
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from grader.engine.expect import (GradeFailure, canonical, expect_close, fail, forward_passes, measure, once_per_leg,
                           running, within)

RULE = "every step of training must run on the device fit is given"


def draw():
    n, f, c = random.randint(300, 500), random.randint(4, 8), random.randint(3, 5)
    # Every class appears, and their sizes differ (halving from one class to the next) so that the class
    # weights change the loss well beyond the check's tolerance: with even classes they are all near 1.
    skew = torch.multinomial(0.5 ** torch.arange(c, dtype=torch.float), n - c, replacement=True)
    y = torch.cat([torch.arange(c), skew])[torch.randperm(n)]
    x = torch.randn(n, f) * torch.rand(f) * 4 + torch.randn(f) * 3  # features far from standard
    return x, y, random.randint(30, 45)


def reference(x, y, steps, linear_state):
    """fit as its docstring says it, on the CPU, from the same initial weights."""
    classes = int(y.max()) + 1
    linear = nn.Linear(x.shape[1], classes)
    linear.load_state_dict({k: v.cpu() for k, v in linear_state.items()})
    mean, std = x.mean(0), x.std(0)
    weight = len(y) / (classes * torch.bincount(y, minlength=classes).float())
    optimizer = torch.optim.SGD(linear.parameters(), lr=0.5)
    for _ in range(steps):
        loss = F.cross_entropy(linear((x - mean) / std), y, weight=weight)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return linear, loss.item()


def explain(exc: GradeFailure, device) -> str:
    text = str(exc)
    why = []
    if "same device" in text or "to be on" in text or "device" in text and "Expected" in text:
        # The rule and the question, not the three fixes: the hints give them one level at a time.
        why.append(f"Two operands of one operation are on different devices ({RULE}). Which of them is still on "
                   "the CPU, and where was it made or moved? Only what your code puts on the device is there: "
                   "model.to(device) moves the model's parameters and registered buffers, and nothing else.")
    return "\n".join([text, *why])


@dataclass
class Fitted:
    x: torch.Tensor
    y: torch.Tensor
    steps: int
    linear_state: dict  # the weights of the first nn.Linear built inside fit, as they were built
    forwards: list  # every forward pass of an nn.Linear during fit (grader.engine.expect.Forward: its input's device)
    result: object
    m: object


@once_per_leg
def fitted(submission, device) -> Fitted:
    x, y, steps = draw()
    built = []

    def weights(linear):  # no copy: counted
        built.append({k: v.detach().clone() for k, v in linear.state_dict().items()})

    # The first forward pass is where the model's initial weights are taken: fit must not change them
    # before training (it builds the model, then moves it).
    try:
        with forward_passes(nn.Linear, first=weights) as forwards, measure(device) as m, \
                running(f"fit(x, y, {steps}, {str(device)!r})", submission):
            result = submission.fit(x.clone(), y.clone(), steps, device)
    except GradeFailure as exc:
        raise GradeFailure(explain(exc, device)) from None
    return Fitted(x, y, steps, built[0] if built else None, forwards, result, m)


def model_and_loss(t: Fitted):
    if not isinstance(t.result, (tuple, list)) or len(t.result) != 2:
        fail(f"fit should return a pair (model, final_loss); got {type(t.result).__name__}.")
    model, loss = t.result
    if not isinstance(model, nn.Module):
        fail(f"fit's first result should be the trained model, an nn.Module; got {type(model).__name__}.")
    return model, loss


def test_the_statistics_belong_to_the_model(submission, device):
    t = fitted(submission, device)
    model, _ = model_and_loss(t)
    state = model.state_dict()
    missing = [k for k in ("mean", "std") if k not in state]
    if missing:
        fail(f"the model's state_dict has no {' and no '.join(map(repr, missing))}: the statistics are plain "
             "attributes, which model.to() does not move and state_dict() does not save, so a model loaded from "
             "a checkpoint standardizes with nothing. Only registered buffers move and save with the model: "
             "self.register_buffer(\"mean\", mean).")
    expect_close(state["mean"].detach().cpu(), t.x.mean(0), "the model's mean", atol=1e-5, rtol=1e-5)
    expect_close(state["std"].detach().cpu(), t.x.std(0), "the model's std", atol=1e-5, rtol=1e-5)


def test_trains_on_the_device_it_is_given(submission, device):
    t = fitted(submission, device)
    model, _ = model_and_loss(t)
    where = sorted({str(v.device) for v in model.state_dict().values()})
    if [canonical(w) for w in where] != [canonical(device)]:
        fail(f"after fit(..., {str(device)!r}) the model's tensors are on {', '.join(where)}: {RULE}, and the "
             "model it returns is there too (model.to(device) moves its parameters and buffers).")
    elsewhere = sorted({str(f.device) for f in t.forwards
                        if f.device is None or canonical(f.device) != canonical(device)})
    if len(t.forwards) < t.steps or elsewhere:
        fail(f"fit(..., {str(device)!r}) ran the model's forward pass on {', '.join(elsewhere) or 'too few steps'}: "
             f"{RULE}: move the model and the data first, then train.")


def test_trains_the_model_the_cpu_trains(submission, device):
    t = fitted(submission, device)
    model, loss = model_and_loss(t)
    if t.linear_state is None:
        fail("fit ran no forward pass of an nn.Linear: it should build a Standardized model and train it.")
    expected, expected_loss = reference(t.x, t.y, t.steps, t.linear_state)
    if not isinstance(loss, float):
        fail(f"fit's final loss should be a Python float (read once with .item()), got {type(loss).__name__}.")
    if not within(loss, expected_loss, 1e-4 + 1e-3 * abs(expected_loss)):
        fail(f"fit's final loss is {loss:.6g}; training as the docstring says gives {expected_loss:.6g} from the "
             "same initial weights (class weights n / (C * count), full-batch SGD with lr=0.5, standardized inputs).")
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if len(linears) != 1:
        fail(f"the model should hold one nn.Linear, as Standardized does; it holds {len(linears)}.")
    for name, p in linears[0].state_dict().items():
        expect_close(p.detach().cpu(), expected.state_dict()[name], f"the trained {name}", atol=1e-4, rtol=1e-3)


def test_python_reads_the_device_once(submission, device):
    t = fitted(submission, device)
    if t.m.round_trips > 1:
        fail(f"fit({t.steps} steps) made {t.m.describe_round_trips()}: each makes Python wait for {device}. The "
             "docstring allows one, the final loss: count the classes where the labels are (on the device), and "
             "read nothing else back.")
