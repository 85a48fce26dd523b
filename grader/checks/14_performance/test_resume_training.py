"""Grader for resume_training, the capstone of "Putting it together": a checkpoint saved on another device
loads without touching that device, training continues on the device given exactly as on the CPU (the
optimizer's state with it), and Python waits for the device only at the logged steps.

One resumed run per leg (a fresh draw; the checks below read it). On an accelerator with two devices the
checkpoint is saved on the other one (a GPU of the machine that is not this run's), elsewhere on the leg's
own device. The epoch has several times more steps than the logging period."""

import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from grader.engine.expect import (GradeFailure, canonical, expect_close, fail, forward_passes, measure, once_per_leg,
                           running, within)

FIX_LOAD = ("torch.load(path, map_location=\"cpu\", weights_only=True) restores the checkpoint to the CPU; "
            "load_state_dict then copies it where the model and its parameters are.")


def make_model(features, classes):
    return nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))


def saving_device(device: torch.device) -> torch.device:
    """The device the last run saved from: another device of the same kind where there is one."""
    if device.type == "cpu":
        return device
    count = torch.get_device_module(device).device_count()
    return torch.device(device.type, ((device.index or 0) + 1) % count) if count > 1 else device


def moved(value, device):
    """A state_dict as a run on `device` saves it (Adam's step counters stay on the CPU, as torch keeps them)."""
    if isinstance(value, dict):
        return {k: value[k] if k == "step" else moved(value[k], device) for k in value}
    if isinstance(value, (list, tuple)):
        return type(value)(moved(v, device) for v in value)
    return value.to(device) if isinstance(value, torch.Tensor) else value


def draw():
    f, c = random.randint(6, 12), random.randint(3, 6)
    model = make_model(f, c)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(3):  # the state a run leaves: moving averages that are not zero
        x, y = torch.randn(32, f), torch.randint(0, c, (32,))
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    n = random.randint(30, 45) * 16
    loader = DataLoader(TensorDataset(torch.randn(n, f), torch.randint(0, c, (n,))), batch_size=16)
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                  "step": random.randint(100, 999), "shape": (f, c)}
    return checkpoint, loader, random.randint(5, 9)


def reference(checkpoint, loader, log_every):
    model = make_model(*checkpoint["shape"])
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    optimizer.load_state_dict(checkpoint["optimizer"])
    log = []
    for step, (x, y) in enumerate(loader, start=checkpoint["step"] + 1):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            log.append((step, loss.item()))
    return model, log


@dataclass
class Resumed:
    checkpoint: dict
    loader: DataLoader
    log_every: int
    saved_on: torch.device
    put_on_saving_device: int  # peak bytes allocated on saved_on during the run, above what was there
    forwards: list  # every forward pass of an nn.Sequential (grader.engine.expect.Forward: its input's device)
    result: object
    m: object


@once_per_leg
def resumed(submission, device) -> Resumed:
    checkpoint, loader, log_every = draw()
    saved_on = saving_device(device)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "last.pt"
        torch.save(moved(checkpoint, saved_on), path)
        mod = torch.get_device_module(saved_on) if saved_on != device else None
        if mod is not None:
            mod.reset_peak_memory_stats(saved_on)
            before = mod.memory_allocated(saved_on)
        try:
            with forward_passes(nn.Sequential) as forwards, measure(device) as m, \
                    running(f"resume(path, loader, {str(device)!r}, {log_every}) of a checkpoint saved on {saved_on}",
                            submission):
                result = submission.resume(str(path), loader, device, log_every)
        except GradeFailure as exc:
            text = str(exc)
            if "same device" in text or "to be on" in text:
                text += ("\nOne operand is still where the checkpoint put it or where the model was built: "
                         "Optimizer.load_state_dict puts the saved state where each parameter is at that moment, "
                         "so move the model to the device before building the optimizer and loading its state. "
                         + FIX_LOAD)
            raise GradeFailure(text) from None
        extra = mod.max_memory_allocated(saved_on) - before if mod is not None else 0
    return Resumed(checkpoint, loader, log_every, saved_on, extra, forwards, result, m)


def model_and_log(t: Resumed):
    if not isinstance(t.result, (tuple, list)) or len(t.result) != 2 or not isinstance(t.result[0], nn.Module):
        fail(f"resume should return a pair (model, log); got {type(t.result).__name__}.")
    return t.result


def test_loads_nothing_onto_the_device_that_saved_it(submission, device):
    t = resumed(submission, device)
    if t.put_on_saving_device > 0:
        fail(f"resume put {t.put_on_saving_device} bytes on {t.saved_on}, the device that saved the checkpoint, "
             f"while this run is on {device}: torch.load restores every tensor to the device it was saved from, "
             f"which on another machine may not exist. {FIX_LOAD}")


def test_trains_on_the_device_it_is_given(submission, device):
    t = resumed(submission, device)
    model, _ = model_and_log(t)
    where = sorted({str(v.device) for v in model.state_dict().values()})
    if [canonical(w) for w in where] != [canonical(device)]:
        fail(f"the model resume returns has tensors on {', '.join(where)}; it should be on {device}.")
    elsewhere = sorted({str(f.device) for f in t.forwards
                        if f.device is None or canonical(f.device) != canonical(device)})
    if len(t.forwards) < len(t.loader) or elsewhere:
        fail(f"resume ran the model on {', '.join(elsewhere) or 'fewer batches than the loader has'}: every step "
             f"must run on {device}.")


def test_continues_the_run_the_cpu_continues(submission, device):
    t = resumed(submission, device)
    model, log = model_and_log(t)
    expected_model, expected_log = reference(t.checkpoint, t.loader, t.log_every)
    if not isinstance(log, list) or any(not isinstance(e, (tuple, list)) or len(e) != 2 for e in log):
        fail(f"the log should be a list of (step, loss) pairs; got {log!r:.100}.")
    steps, want_steps = [e[0] for e in log], [s for s, _ in expected_log]
    if steps != want_steps:
        fail(f"the log has the steps {steps[:6]}...; continuing from step {t.checkpoint['step']} with log_every="
             f"{t.log_every} it should have {want_steps[:6]}... (the first batch is step checkpoint['step'] + 1).")
    for (step, loss), (_, want) in zip(log, expected_log):
        if not isinstance(loss, float):
            fail(f"the loss logged at step {step} is a {type(loss).__name__}: log a Python float (.item()).")
        if not within(loss, want, 1e-4 + 1e-3 * abs(want)):
            fail(f"the loss logged at step {step} is {loss:.6g}; continuing the saved run gives {want:.6g}. Are "
                 "the saved weights and the optimizer's saved state (AdamW's moving averages) both restored?")
    for (name, p), q in zip(model.state_dict().items(), expected_model.state_dict().values()):
        expect_close(p.detach().cpu(), q, f"the trained {name}", atol=1e-4, rtol=1e-3)


def test_python_waits_only_to_log(submission, device):
    t = resumed(submission, device)
    logged = len(t.loader) // t.log_every + 1
    if t.m.waits > logged:
        if any("optimizer" in line.code and "step" in line.code for line in t.m.read_lines if line is not None):
            fail(f"resume made {t.m.describe_waits()} over {len(t.loader)} steps: AdamW reads each parameter's "
                 f"step counter with .item() at every step, which makes Python wait when the counters are on "
                 f"{device}. Optimizer.load_state_dict leaves the step counters where torch.load put them: map the "
                 "checkpoint to the CPU (map_location=\"cpu\"), and load_state_dict moves the rest to the parameters.")
        fail(f"resume made {t.m.describe_waits()} over {len(t.loader)} steps, of which about {logged - 1} are "
             f"logged: each makes Python wait for {device}. Read the loss (.item()) only at the steps you log.")
