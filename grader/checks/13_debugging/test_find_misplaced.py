"""Grader for find_misplaced: the report must name every tensor off the expected device: parameters,
buffers, unregistered tensor attributes of any submodule, and every leaf of a nested batch."""

import random

import torch
from torch import nn

from grader.engine.expect import fail, measure, running

WHY = {
    "parameter": "a parameter",
    "buffer": "a registered buffer (list them with named_buffers())",
    "attribute": "a plain tensor attribute that model.to() never moves (look through vars() of every submodule, "
                 "as module_devices in the chapter does)",
    "batch": "a leaf of the batch (walk dicts, lists and tuples recursively)",
}


PLURAL = {"parameter": "parameters", "buffer": "buffers", "attribute": "plain tensor attributes",
          "batch": "leaves of a batch"}


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.norm = nn.BatchNorm1d(d)
        self.pos = torch.randn(6, d)                      # unregistered


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.encoder = Block(d)
        self.head = nn.Linear(d, 3)
        self.register_buffer("scale", torch.ones(d))
        self.register_buffer("rotary", torch.randn(d), persistent=False)  # a buffer that state_dict() leaves out
        self.cache = torch.zeros(d)                       # unregistered


def other_device(device):
    return torch.device("meta") if device.type == "cpu" else torch.device("cpu")


def build_model(device, stray_on):
    """A model on `device` with a random non-empty set of its tensors on `stray_on`; returns (model, {name: kind})."""
    model = Net(random.randint(3, 6)).to(device)
    model.encoder.pos, model.cache = model.encoder.pos.to(device), model.cache.to(device)
    slots = []
    for prefix, sub in model.named_modules():
        for name in list(sub._parameters):
            slots.append((sub, prefix, name, "parameter"))
        for name in list(sub._buffers):
            slots.append((sub, prefix, name, "buffer"))
        for name in ("pos", "cache"):
            if name in vars(sub):
                slots.append((sub, prefix, name, "attribute"))
    by_kind = {}
    for slot in slots:
        by_kind.setdefault(slot[3], []).append(slot)
    chosen = {random.choice(group) for group in by_kind.values()}       # one of each kind at least
    chosen |= {s for s in slots if random.random() < 0.3}
    chosen |= {s for s in slots if s[2] == "rotary"}  # always: a walk of state_dict() then fails on every draw
    expected = {}
    for sub, prefix, name, kind in chosen:
        full = f"{prefix}.{name}" if prefix else name
        if kind == "parameter":
            sub._parameters[name] = nn.Parameter(sub._parameters[name].detach().to(stray_on))
        elif kind == "buffer":
            sub._buffers[name] = sub._buffers[name].to(stray_on)
        else:
            setattr(sub, name, getattr(sub, name).to(stray_on))
        expected[full] = kind
    return model, expected


def build_batch(device, stray_on):
    n = random.randint(2, 5)
    batch = {
        "inputs": torch.randn(n, 4, device=device),
        "mask": torch.ones(n, 4, dtype=torch.bool, device=device),
        "targets": (torch.randint(0, 3, (n,), device=device), [torch.rand(n, device=device)]),
        "meta": {"lengths": torch.full((n,), 4, device=device), "ids": list(range(n))},
    }
    paths = {"inputs": ("inputs",), "mask": ("mask",), "targets.0": ("targets", 0), "targets.1.0": ("targets", 1, 0),
             "meta.lengths": ("meta", "lengths")}
    # One leaf inside each kind of container (tuple, list, dict) always strays, plus any of the top-level ones:
    # a walker that skips a kind of container then fails on every draw, not on some.
    chosen = ["targets.0", "targets.1.0", "meta.lengths"] + random.sample(["inputs", "mask"], random.randint(0, 2))
    for name in chosen:
        *parents, last = paths[name]
        holder = batch
        for key in parents:
            holder = holder[key]
        if isinstance(holder, tuple):
            continue
        holder[last] = holder[last].to(stray_on)
    # the tuple's first element: rebuild the tuple
    if "targets.0" in chosen:
        t, rest = batch["targets"]
        batch["targets"] = (t.to(stray_on), rest)
    return batch, {name: "batch" for name in chosen}


def report(submission, obj, device, what):
    with measure(device) as m:
        with running(f"find_misplaced({what}, {str(device)!r})", submission):
            found = submission.find_misplaced(obj, device)
    if not isinstance(found, (list, tuple, set)) or not all(isinstance(n, str) for n in found):
        fail(f"find_misplaced should return a list of names (strings), got {found!r:.100}.")
    if m.h2d or m.d2h or m.d2d:
        fail(f"find_misplaced copied tensors ({len(m.h2d) + len(m.d2h) + len(m.d2d)} copies): a report only reads "
             "each tensor's .device; it must not move or copy anything.")
    return set(found)


def why(name: str, kind: str) -> str:
    if kind == "batch" and "." not in name:  # a top-level entry: no walk was needed to reach it
        return "an entry of the batch itself"
    return WHY[kind]


def compare(found, expected, device, stray_on, what):
    missed = sorted(set(expected) - found)
    extra = sorted(found - set(expected))
    if missed and stray_on.type == device.type and set(missed) == set(expected):
        # Every stray tensor, of every kind, missed when only the index differs: the comparison drops the index.
        fail(f"find_misplaced({what}, {str(device)!r}) missed every tensor on {stray_on} ({', '.join(missed[:4])}"
             f"{', ...' if len(missed) > 4 else ''}): {stray_on} and {device} are two devices of one kind, and a "
             "comparison of device.type (or of a device without its index) cannot tell them apart. Compare whole "
             "devices, index included: t.device != torch.device(device). A report that misses them says 'all "
             "clear' while the bug is there.")
    if missed:
        kinds = sorted({expected[n] for n in missed})
        fail(f"find_misplaced({what}, {str(device)!r}) missed {', '.join(missed)}, on {stray_on}: "
             + "; ".join(f"{n} is {why(n, expected[n])}" for n in missed[:4])
             + f". A report that skips {' and '.join(PLURAL[k] for k in kinds)} says 'all clear' while the bug is there.")
    if extra:
        fail(f"find_misplaced({what}, {str(device)!r}) reported {', '.join(extra)}, which "
             f"{'are' if len(extra) > 1 else 'is'} on {device} or not a tensor name of the documented form "
             f"(expected exactly: {', '.join(sorted(expected)) or 'nothing'}).")


def test_reports_every_misplaced_tensor_of_a_module(submission, device):
    stray_on = other_device(device)
    model, expected = build_model(device, stray_on)
    found = report(submission, model, device, "model")
    compare(found, expected, device, stray_on, "model")


def test_reports_every_misplaced_leaf_of_a_batch(submission, device):
    stray_on = other_device(device)
    batch, expected = build_batch(device, stray_on)
    found = report(submission, batch, device, "batch")
    compare(found, expected, device, stray_on, "batch")


def test_says_all_clear_when_all_is_clear(submission, device):
    model = Net(4).to(device)
    model.encoder.pos, model.cache = model.encoder.pos.to(device), model.cache.to(device)
    batch, _ = build_batch(device, device)
    for obj, what in ((model, "model"), (batch, "batch"), (torch.zeros(3, device=device), "a tensor")):
        found = report(submission, obj, device, what)
        if found:
            fail(f"find_misplaced({what}, {str(device)!r}) reported {', '.join(sorted(found))} although every tensor "
                 f"is on {device}.")


def test_a_bare_tensor_is_named_by_the_empty_path(submission, device):
    stray_on = other_device(device)
    found = report(submission, torch.zeros(3, device=stray_on), device, "a tensor")
    if found != {""}:
        fail(f"find_misplaced(tensor on {stray_on}, {str(device)!r}) should return [''] (a bare tensor's path is "
             f"empty), got {sorted(found)}.")


def test_tells_one_gpu_from_another(submission, devices):
    stray_on, device = devices
    model, expected = build_model(device, stray_on)
    compare(report(submission, model, str(device), "model"), expected, device, stray_on, "model")
    batch, expected = build_batch(device, stray_on)
    compare(report(submission, batch, str(device), "batch"), expected, device, stray_on, "batch")
