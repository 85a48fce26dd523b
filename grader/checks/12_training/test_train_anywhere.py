"""Grader for train_anywhere: a complete training loop that runs on any device, gives the CPU's result, and
reads a value from the device at most once per epoch.

The model has batch norm and arrives in eval mode, so a loop without model.train() trains another model. Besides
three short epochs (compared with the CPU's training), a check runs one epoch of well over a hundred steps: a
read every N steps shows there whatever N a learner picks, and a marker in the model's graph tells whether the
running total keeps every step's autograd graph alive (total += loss without detach()); that run also refuses
float64 tensors made on an accelerator (a float64 running total), which MPS, a device the recipe names, has not."""

import math
import random
import re
import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from grader.engine.expect import (GradeFailure, canonical, expect_close, fail, forward_passes, measure, once_per_leg,
                           refuse_unawaited_reads, running)

RULE = "the training loop must run on the device it is given"
EPOCHS = 3


class _Node:
    """Held by one step's autograd graph (the attribute of a graph node, which backward() does not free): alive
    exactly as long as something still holds that step's graph."""


_GRAPHS = weakref.WeakSet()  # the _Node of every step whose graph is still alive


class _MarkGraph(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.node = _Node()
        _GRAPHS.add(ctx.node)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class MarkGraph(nn.Module):
    """Identity; lets the grader count the steps whose autograd graph something still holds."""

    def forward(self, x):
        return _MarkGraph.apply(x)


def make_model(f, c):
    # Batch norm: in eval mode it normalises with running statistics, so a loop that drops model.train() (the
    # model arrives in eval mode, as after a validation) trains another model.
    return nn.Sequential(nn.Linear(f, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, c), MarkGraph())


def draw():
    """A fresh model, in eval mode, and its loader."""
    n, f, c = random.randint(40, 72), random.randint(4, 8), random.randint(3, 4)
    x = torch.randn(n, f)
    y = torch.randint(0, c, (n,))
    size = random.choice([12, 16])
    if n % size == 1:  # batch norm needs two rows or more in training mode
        n -= 1
    loader = DataLoader(TensorDataset(x[:n], y[:n]), batch_size=size, shuffle=False)
    return make_model(f, c).eval(), loader


def draw_long():
    """A small model (a step is few operations: the simulator runs each in Python) and one epoch of well over a
    hundred batches of a few rows: longer than any logging period a learner might pick."""
    f, c, steps = random.randint(4, 8), random.randint(3, 4), random.randint(102, 108)
    loader = [(torch.randn(4, f), torch.randint(0, c, (4,))) for _ in range(steps)]
    return nn.Sequential(nn.Linear(f, c), MarkGraph()), loader


def train_reference(initial_state, model_like, loader):
    model = model_like
    model.load_state_dict(initial_state)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = []
    for _ in range(EPOCHS):
        model.train()
        losses = []
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        history.append(torch.stack(losses).mean().item())
    return model, history


def fresh_copy(model):
    return make_model(model[0].in_features, model[3].out_features)


def explain(exc: GradeFailure, device) -> str:
    text = str(exc)
    why = [f"{RULE} ({device}) and touch no other."]
    named = set(re.findall(r"\b(?:cuda|mps|xpu|sim)(?::\d+)?\b", text)) - {str(device)}
    same_kind = {n for n in named if n.split(":")[0] == device.type}
    if same_kind and not named - same_kind and "CUDA" not in text:
        why.append(f"Something went to {', '.join(sorted(same_kind))}, another {device.type} device: a device without "
                   f"its index (device.type, '{device.type}', torch.accelerator.current_accelerator()) means the "
                   "current device; move the model and the batches with the `device` argument itself.")
    elif "CUDA" in text or named:
        why.append("A device named in the code, such as model.to('cuda'), exists on one kind of machine only and is "
                   "the wrong GPU on the others: move the model with the `device` argument.")
    if "same device" in text or "to be on" in text:
        why.append("Two operands of one operation are on different devices: is every tensor the loss uses, the "
                   "labels too, on `device`?")
    return f"{text}\n" + " ".join(why)


def run(submission, device, model, loader, what="train"):
    try:
        with running(f"train(model, loader, {EPOCHS}, {str(device)!r})", submission):
            history = submission.train(model, loader, EPOCHS, device)
    except GradeFailure as exc:
        fail(explain(exc, device))
    return history


@dataclass
class Trained:
    """One training of a fresh model on one leg, which every check below reads (the grader's time goes there)."""
    model: nn.Module
    loader: DataLoader
    initial: dict  # the model's state before train()
    forwards: list  # each forward pass of the model (grader.engine.expect.Forward: the device of its batch)
    history: object
    m: object  # what measure() counted during train()


@once_per_leg
def trained(submission, device) -> Trained:
    model, loader = draw()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    with forward_passes(model) as forwards, measure(device) as m:
        history = run(submission, device, model, loader)
    return Trained(model, loader, initial, forwards, history, m)


def test_trains_on_the_device_it_is_given(submission, device):
    t = trained(submission, device)
    where = sorted({str(p.device) for p in t.model.parameters()})
    if where != [str(torch.device(device))] and not (device.type != "cpu" and where == [f"{device.type}:0"]
                                                     and device.index in (None, 0)):
        fail(f"after train(..., {str(device)!r}) the model's parameters are on {', '.join(where)}: {RULE}; "
             "move the model there with model.to(device), before the optimizer is built.")
    elsewhere = sorted({str(f.device) for f in t.forwards
                        if f.device is None or canonical(f.device) != canonical(device)})
    if not t.forwards or elsewhere:
        fail(f"train(..., {str(device)!r}) ran the model's forward pass on {', '.join(elsewhere) or 'no batch'}: "
             f"{RULE}, every step of it: move the model and each batch there, then train (moving the model only "
             "at the end trains on another device).")


def test_same_result_as_on_the_cpu(submission, device):
    t = trained(submission, device)
    expected_model, expected_history = train_reference(t.initial, fresh_copy(t.model), t.loader)
    history = t.history
    if not isinstance(history, (list, tuple)) or len(history) != EPOCHS:
        fail(f"train should return a list of {EPOCHS} mean losses, one per epoch; got {history!r:.80}.")
    if any(not isinstance(h, float) for h in history):
        fail(f"train should return Python floats, one per epoch (read each epoch's mean with .item()); got "
             f"{history!r:.80}.")
    refuse_unawaited_reads(t.m, "train")
    if any(math.isnan(h) for h in history) and not any(math.isnan(h) for h in expected_history):
        fail(f"train returned the mean losses {[round(h, 4) for h in history]}, with NaN where the CPU's training gives "
             f"{[round(h, 4) for h in expected_history]}: was a value copied to the host with non_blocking=True and "
             "read before the device had run the copy (the simulator leaves such a buffer NaN)? Read it after "
             "synchronizing, or with .item() / a blocking copy.")
    got = torch.tensor(history, dtype=torch.float64)
    expect_close(got, torch.tensor(expected_history, dtype=torch.float64), "the mean losses train returned",
                 atol=1e-4, rtol=1e-3)
    for (name, p), q in zip(t.model.state_dict().items(), expected_model.state_dict().values()):
        expect_close(p, q, f"the trained parameter {name}", atol=1e-4, rtol=1e-3)


def test_reads_the_device_at_most_once_per_epoch(submission, device):
    t = trained(submission, device)
    if t.m.waits > EPOCHS:
        fail(f"train({EPOCHS} epochs of {len(t.loader)} batches) made {t.m.describe_waits()}: " + waits_cost(device))


def waits_cost(device) -> str:
    return (f"each makes Python wait until {device} has finished the step, so the device idles while Python prepares "
            "the next one. Keep the running loss on the device (total += loss.detach()) and read it once per epoch.")


def test_long_epochs_read_the_device_once_each(submission, device):
    """An epoch of well over a hundred steps: a read every N steps shows, whatever N a learner picks below that;
    and the running total must not keep each step's graph alive."""
    model, loader = draw_long()
    peak = []

    def count_graphs(module, args):
        peak.append(len(_GRAPHS))

    model.register_forward_pre_hook(count_graphs)
    epochs, before = 1, len(_GRAPHS)
    with measure(device) as m:
        try:
            with running(f"train(model, loader of {len(loader)} batches, {epochs}, {str(device)!r})", submission):
                history = submission.train(model, loader, epochs, device)
        except GradeFailure as exc:
            fail(explain(exc, device))
    if not isinstance(history, (list, tuple)) or len(history) != epochs:
        fail(f"train should return a list of {epochs} mean losses, one per epoch; got {history!r:.80}.")
    if m.float64:
        fail(f"train made {m.describe_float64()}: an Apple GPU (MPS), one of the devices train must run on, has no "
             "float64, so this fails there. Keep the running loss in the loss's own dtype (total += "
             "loss.detach()); float64 belongs on the CPU, if anywhere.")
    if m.waits > epochs:
        fail(f"train({epochs} epoch of {len(loader)} batches) made {m.describe_waits()}: " + waits_cost(device))
    if max(peak, default=before) - before > 4:
        fail(f"while train ran, the autograd graphs of {max(peak) - before} earlier steps were still alive: a running total "
             "such as total += loss (or total = total + loss) chains each step's graph to the next, so all of them "
             "stay in memory until the epoch ends. Add loss.detach() (the value without its graph) instead.")
