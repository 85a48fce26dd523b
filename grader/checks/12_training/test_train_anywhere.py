"""Grader for train_anywhere: a complete training loop that runs on any device, gives the CPU's result, and
reads a value from the device at most once per epoch."""

import random
import re
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from grader.expect import GradeFailure, canonical, expect_close, fail, measure, running

RULE = "the training loop must run on the device it is given"
EPOCHS = 3


def draw():
    n, f, c = random.randint(40, 72), random.randint(4, 8), random.randint(3, 4)
    x = torch.randn(n, f)
    y = torch.randint(0, c, (n,))
    loader = DataLoader(TensorDataset(x, y), batch_size=random.choice([12, 16]), shuffle=False)
    model = nn.Sequential(nn.Linear(f, 16), nn.ReLU(), nn.Linear(16, c))
    return model, loader


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
    twin = nn.Sequential(*[nn.Linear(m.in_features, m.out_features) if isinstance(m, nn.Linear) else nn.ReLU()
                           for m in model])
    return twin


def explain(exc: GradeFailure, device) -> str:
    text = str(exc)
    why = [f"{RULE} ({device}) and touch no other."]
    named = set(re.findall(r"\b(?:cuda|mps|xpu|sim)(?::\d+)?\b", text)) - {str(device)}
    if "CUDA" in text or named:
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
    batches_seen: list  # the device of each batch the model's forward pass received
    history: object
    m: object  # what measure() counted during train()


_TRAINED: dict = {}  # (file, device) -> Trained, or the GradeFailure that train() ended with


def trained(submission, device) -> Trained:
    key = (submission.filename, str(device))  # the submission fixture is made anew for each check
    if key not in _TRAINED:
        model, loader = draw()
        initial = {k: v.clone() for k, v in model.state_dict().items()}
        seen = []
        model.register_forward_pre_hook(lambda module, args: seen.append(args[0].device if args else None))
        try:
            with measure(device) as m:
                history = run(submission, device, model, loader)
            _TRAINED[key] = Trained(model, loader, initial, seen, history, m)
        except GradeFailure as exc:
            _TRAINED[key] = exc
    if isinstance(_TRAINED[key], GradeFailure):
        raise _TRAINED[key]
    return _TRAINED[key]


def test_trains_on_the_device_it_is_given(submission, device):
    t = trained(submission, device)
    where = sorted({str(p.device) for p in t.model.parameters()})
    if where != [str(torch.device(device))] and not (device.type != "cpu" and where == [f"{device.type}:0"]
                                                     and device.index in (None, 0)):
        fail(f"after train(..., {str(device)!r}) the model's parameters are on {', '.join(where)}: {RULE}; "
             "move the model there with model.to(device), before the optimizer is built.")
    elsewhere = sorted({str(d) for d in t.batches_seen if d is None or canonical(d) != canonical(device)})
    if not t.batches_seen or elsewhere:
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
    got = torch.tensor(history, dtype=torch.float64)
    expect_close(got, torch.tensor(expected_history, dtype=torch.float64), "the mean losses train returned",
                 atol=1e-4, rtol=1e-3)
    for (name, p), q in zip(t.model.state_dict().items(), expected_model.state_dict().values()):
        expect_close(p, q, f"the trained parameter {name}", atol=1e-4, rtol=1e-3)


def test_reads_the_device_at_most_once_per_epoch(submission, device):
    t = trained(submission, device)
    if t.m.waits > EPOCHS:
        fail(f"train({EPOCHS} epochs of {len(t.loader)} batches) made {t.m.describe_waits()}: each makes Python "
             f"wait until {device} has finished the step, so the device idles while Python prepares the next one. "
             "Keep the running loss on the device (total += loss.detach()) and read it once per epoch.")
