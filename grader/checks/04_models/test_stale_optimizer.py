"""Grader for stale_optimizer: the optimizer must hold the very parameters the model uses (checked by
identity), on the device, and a few training steps must match SGD with momentum computed here on the CPU, with
the lr given to build (never the default); train_step returns the loss of its batch."""

import copy
import random

import torch
import torch.nn.functional as F

from grader.engine.expect import expect_close, expect_device, fail, running, within

FIX = ("build the optimizer after the model is on the device (model.to(device) keeps each nn.Parameter and "
       "moves its data), so that it holds the parameters the model uses")


def build(submission, device):
    # never the default 0.1, so that a build which ignores its lr fails on every draw
    f, c, lr = random.randint(4, 9), random.randint(3, 6), random.choice([0.03, 0.05, 0.2, 0.3])
    with running(f"build({f}, {c}, {str(device)!r}, lr={lr})", submission):
        model, optimizer = submission.build(f, c, device, lr=lr)
    return model, optimizer, f, c, lr


def test_optimizer_holds_the_models_parameters(submission, device):
    model, optimizer, *_ = build(submission, device)
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    named = list(model.named_parameters())
    missing = [name for name, p in named if id(p) not in held]
    if missing:
        fail(f"{len(missing)} of the model's {len(named)} parameters ({', '.join(missing)}) are not in the "
             f"optimizer after build(..., {str(device)!r}): it holds other tensors, which the model no longer "
             f"uses, so optimizer.step() trains nothing the model computes with. To fix it, {FIX}.")


def test_parameters_are_on_the_device(submission, device):
    model, *_ = build(submission, device)
    for name, p in model.named_parameters():
        expect_device(p, device, f"model parameter {name}", "build should put the model on the device it is given.")


def expect_loss(returned, loss: float, step: int):
    """train_step returns the loss of the batch it trained on, computed before its update."""
    if isinstance(returned, torch.Tensor) and returned.numel() == 1:
        returned = float(returned.detach().cpu())  # a tensor or a number: the statement says "the loss"
    if not isinstance(returned, (int, float)):
        got = "None (is a return statement missing?)" if returned is None else f"a {type(returned).__name__}"
        fail(f"train_step should return the loss of the batch, but it returned {got}.")
    if not within(returned, loss, 1e-4 + 1e-3 * abs(loss)):
        fail(f"train_step returned {returned:.5f} at step {step + 1}, but the loss of that batch before the update "
             f"is {loss:.5f}: return the loss that the step computed its gradients from.")


def test_training_steps_match_sgd(submission, device):
    model, optimizer, f, c, lr = build(submission, device)
    reference = copy.deepcopy(model).cpu()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=lr, momentum=0.9)
    before = [p.detach().cpu().clone() for p in model.parameters()]
    returned, losses = [], []
    for step in range(3):
        x, y = torch.randn(16, f), torch.randint(0, c, (16,))
        with running(f"train_step(model, optimizer, x, y) with x and y on {device}", submission):
            returned.append(submission.train_step(model, optimizer, x.to(device), y.to(device)))
        loss = F.cross_entropy(reference(x), y)
        losses.append(loss.item())
        ref_opt.zero_grad()
        loss.backward()
        ref_opt.step()
    after = [p.detach().cpu() for p in model.parameters()]
    if all(torch.equal(a, b) for a, b in zip(after, before)):
        fail(f"after 3 calls of train_step on {device} no parameter of the model has changed: the optimizer's "
             f"parameters are not the model's. To fix it, {FIX}.")
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        expect_close(p, q, f"parameter {name} after 3 steps of SGD (momentum 0.9)", atol=1e-4, rtol=1e-3)
    for step, (got, loss) in enumerate(zip(returned, losses)):  # once the steps are right, so is each loss
        expect_loss(got, loss, step)
