"""Grader for resume_optimizer: after resuming, Adam's state must be on the device of its parameters, and
training must continue exactly as it would have on the CPU."""

import copy
import random

import torch
import torch.nn.functional as F
from torch import nn

from grader.engine.expect import GradeFailure, expect_close, fail, running

LR = 1e-2
FIX = ("optimizer.load_state_dict() puts each state tensor on its parameter's device at the time it is called; "
       "model.to(device) afterwards moves the parameters but not the optimizer's state. Move the model first, "
       "then build the optimizer and load its state.")


def model_for(f, c):
    return nn.Sequential(nn.Linear(f, 32), nn.ReLU(), nn.Linear(32, c))


def step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def make_checkpoint():
    """A model trained a few steps with Adam on the CPU, and batches to continue with."""
    f, c = random.randint(4, 9), random.randint(3, 5)
    batches = [(torch.randn(16, f), torch.randint(0, c, (16,))) for _ in range(random.randint(3, 5) + 2)]
    model = model_for(f, c)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    for x, y in batches[:-2]:
        step(model, optimizer, x, y)
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "features": f, "classes": c}
    checkpoint = copy.deepcopy(checkpoint)
    for x, y in batches[-2:]:            # what resuming must reproduce
        step(model, optimizer, x, y)
    return checkpoint, batches[-2:], model


def resume(submission, checkpoint, device):
    with running(f"resume(checkpoint, {str(device)!r})", submission):
        out = submission.resume(copy.deepcopy(checkpoint), device)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"resume should return (model, optimizer), got {type(out).__name__}.")
    model, optimizer = out
    if not isinstance(model, nn.Module) or not isinstance(optimizer, torch.optim.Optimizer):
        fail("resume should return a model (nn.Module) and its optimizer (torch.optim.Adam).")
    return model, optimizer


def test_optimizer_state_is_on_the_parameters_device(submission, device):
    checkpoint, _, _ = make_checkpoint()
    model, optimizer = resume(submission, checkpoint, device)
    for name, p in model.named_parameters():
        if p.device != torch.device(device) and str(p.device) != f"{device}:0":
            fail(f"after resume(checkpoint, {str(device)!r}) the model's {name} is on {p.device}: move the model to "
                 "the device you are given.")
        state = optimizer.state.get(p)
        if not state or not any(isinstance(t, torch.Tensor) and t.shape == p.shape for t in state.values()):
            fail(f"the optimizer holds no saved state for the model's {name}: Adam's moving averages from the "
                 "checkpoint are lost (or the optimizer does not hold the returned model's parameters). Build the "
                 "optimizer from model.parameters() and load checkpoint['optimizer'] into it.")
        for key, t in state.items():
            if isinstance(t, torch.Tensor) and t.shape == p.shape and t.device != p.device:
                fail(f"Adam's {key} for {name} is on {t.device} while {name} is on {p.device}: the optimizer state "
                     f"is left on {t.device}. {FIX}")


def test_training_continues_where_it_stopped(submission, device):
    checkpoint, batches, expected = make_checkpoint()
    model, optimizer = resume(submission, checkpoint, device)
    try:
        with running(f"two training steps on {device} with the optimizer resume returned", submission,
                     explain_device_error=f"the optimizer state is left behind on another device: {FIX}"):
            for x, y in batches:
                step(model, optimizer, x.to(device), y.to(device))
    except GradeFailure as exc:
        fail(str(exc).replace("raised", "(the grader's own training step) raised", 1))
    for (name, p), q in zip(model.named_parameters(), expected.parameters()):
        expect_close(p, q, f"{name} after two more steps (compared with training on the CPU without a break; "
                           "is the checkpoint's optimizer state loaded, with its learning rate?)", atol=1e-5, rtol=1e-4)
