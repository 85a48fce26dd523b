"""Grader for scaled_training: float16 training whose loss is scaled on whatever device it runs.

One run per check, on fresh data: a small regression model (its last layer starts small, so that its gradients
are small, as late in training) and a few batches, one of them with a NaN target, whose step GradScaler skips.
Judged by what happened: the dtype each nn.Linear ran in (float16 under autocast), the gradient that reached the
model's output (the loss's own gradient times the scale, which is above 1 when the loss is scaled), and the
trained parameters, compared with SGD on the CPU in float32 with the NaN batch skipped."""

import random
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from grader.engine.expect import fail, once_per_leg, running

NOT_SCALED = ("the loss was not scaled on {device}: the gradient that reached the model's output is the loss's own "
              "gradient (scaled by {ratio:.3g}){warned}. A GradScaler is made for one device type, its first "
              "argument: torch.amp.GradScaler('cuda') (or torch.cuda.amp.GradScaler()) switches itself off where "
              "CUDA is not available, and then scale() returns the loss as it is. Make it for the type of the "
              "device the model is on.")


def draw():
    f, h, steps, rows = random.randint(4, 8), random.randint(8, 16), random.randint(4, 6), random.randint(24, 40)
    model = nn.Sequential(nn.Linear(f, h), nn.ReLU(), nn.Linear(h, 1)).train()
    with torch.no_grad():
        model[2].weight.mul_(0.01)  # small gradients, as late in training: float16 needs the loss scaled for them
        model[2].bias.zero_()
    batches = [(torch.randn(rows, f), 0.01 * torch.randn(rows, 1)) for _ in range(steps)]
    bad = random.randint(1, steps - 2)
    batches[bad][1][random.randrange(rows)] = float("nan")  # a step with NaN gradients: GradScaler skips it
    return model, batches, bad, random.choice([0.05, 0.1, 0.2])


def reference(model, batches, bad, lr):
    """Plain SGD in float32 on the CPU, skipping the step whose gradients are not finite."""
    ref = [p.detach().clone().requires_grad_() for p in model.parameters()]
    w1, b1, w2, b2 = ref
    for i, (x, y) in enumerate(batches):
        if i == bad:
            continue
        loss = F.mse_loss(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)
        grads = torch.autograd.grad(loss, ref)
        with torch.no_grad():
            for p, g in zip(ref, grads):
                p -= lr * g
    return [p.detach() for p in ref]


@once_per_leg
def trained(submission, device):
    model, batches, bad, lr = draw()
    want = reference(model, batches, bad, lr)
    start = [p.detach().clone() for p in model.parameters()]
    model.to(device)
    batches = [(x.to(device), y.to(device)) for x, y in batches]
    dtypes, ratios = [], {}

    def at_output(module, args, out):
        """The gradient of the mean squared error at the output, beside the one that really arrived there."""
        step = len(ratios)
        ratios[step] = float("nan")
        if out.requires_grad and step < len(batches):
            own = 2 * (out.detach().double() - batches[step][1].double()) / out.numel()

            def compare(grad):
                ratios[step] = float(grad.double().norm() / own.norm())
            out.register_hook(compare)

    hooks = [m.register_forward_hook(lambda mod, args, out: dtypes.append((out.dtype, out.device)))
             for m in model.modules() if isinstance(m, nn.Linear)]
    hooks.append(model.register_forward_hook(at_output))
    try:
        with warnings.catch_warnings(record=True) as caught, running(f"train(model, batches, lr={lr})", submission):
            warnings.simplefilter("always")
            submission.train(model, batches, lr=lr)
    finally:
        for h in hooks:
            h.remove()
    warned = [str(w.message).splitlines()[0] for w in caught if "not available" in str(w.message)]
    return {"dtypes": dtypes, "ratios": ratios, "warned": warned, "want": want, "bad": bad, "start": start,
            "names": [n for n, _ in model.named_parameters()], "got": [p.detach() for p in model.parameters()]}


def test_runs_the_forward_pass_in_float16(submission, device):
    run = trained(submission, device)
    if not run["dtypes"]:
        fail("train never ran the model's nn.Linear layers: run the model on each batch.")
    dtype, where = next(((dt, d) for dt, d in run["dtypes"] if dt != torch.float16), run["dtypes"][0])
    if dtype != torch.float16:
        fail(f"the model's matrix products ran in {str(dtype).removeprefix('torch.')} on {where}; train promises "
             "float16 mixed precision: torch.autocast(device_type=<the model's device type>, dtype=torch.float16).")
    if where != device:
        fail(f"the model ran on {where}, but it and the batches were on {device}.")


def test_scales_the_loss_before_backward(submission, device):
    run = trained(submission, device)
    first = run["ratios"].get(0)
    if first is None:
        fail("train never ran the model: run it on each batch, then scaler.scale(loss).backward().")
    if not first > 2:  # GradScaler starts at 65536; NaN (no backward through the output) fails too
        warned = f" (PyTorch warned: {run['warned'][0]!r})" if run["warned"] else ""
        fail(NOT_SCALED.format(device=device, ratio=first, warned=warned))


def test_trains_like_sgd_on_the_unscaled_gradient(submission, device):
    run = trained(submission, device)
    for name, got in zip(run["names"], run["got"]):
        if not torch.isfinite(got.cpu()).all():
            fail(f"after train the model's {name} holds inf or NaN. Either a step whose gradients were not finite "
                 "(a batch with a NaN target) was applied: scaler.step(optimizer) skips such a step, but only while "
                 "the scaler is enabled (a disabled one, like optimizer.step() called directly, applies it); or the "
                 "optimizer stepped on gradients still multiplied by the scale, and the model overflowed.")
    # All parameters together: float16's rounding moves each a little (the small ones relatively most), a
    # gradient left multiplied by the scale moves them thousands of times too far.
    flat = lambda ts: torch.cat([t.detach().cpu().double().flatten() for t in ts])  # noqa: E731
    got, want, start = flat(run["got"]), flat(run["want"]), flat(run["start"])
    error = float((got - want).norm() / (want - start).norm())
    if not error < 0.05:
        fail(f"after train the model's parameters are not where SGD with lr on the true gradient puts them (they "
             f"moved {float((got - start).norm() / (want - start).norm()):.3g} times as far): divide the gradients "
             "by the scale before the optimizer's step: scaler.step(optimizer) does it (or "
             "scaler.unscale_(optimizer) first), then scaler.update().")
