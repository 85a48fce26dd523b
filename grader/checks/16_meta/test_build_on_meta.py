"""Grader for build_on_meta: a model built on meta is given memory on the device (to_empty) and initialised
there, the computed buffer included, and no weight crosses from the CPU."""

import math
from contextlib import contextmanager

import torch

from grader.engine.expect import canonical, expect_close, fail, measure, running

UNINITIALISED = ("{what} holds NaN: memory that nothing wrote. The grader fills uninitialised memory with NaN, as "
                 "PyTorch does under torch.use_deterministic_algorithms(True); elsewhere it holds whatever was "
                 "there before. .to_empty(device=...) gives every tensor memory on the device but no values: "
                 "initialise the model afterwards (each layer's reset_parameters(), and the computed buffers).")


@contextmanager
def uninitialised_memory_is_nan():
    """torch.empty and to_empty then give NaN (torch.utils.deterministic.fill_uninitialized_memory), on every leg,
    instead of whatever the memory held: a model never initialised fails on every draw."""
    was = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    # the C++ switch that torch.use_deterministic_algorithms sets, without its import of torch._inductor's config
    # (seconds on a first call; inductor plays no part here)
    torch._C._set_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch._C._set_deterministic_algorithms(was[0], warn_only=was[1])
        torch.utils.deterministic.fill_uninitialized_memory = fill


def sizes():
    return dict(vocab=int(torch.randint(400, 600, ())), dim=int(torch.randint(8, 17, ())) * 2,
                max_len=int(torch.randint(20, 41, ())), classes=int(torch.randint(3, 7, ())))


def reference_positions(max_len, dim):
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    frequency = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    table = torch.empty(max_len, dim, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = torch.sin(position * frequency), torch.cos(position * frequency)
    return table


def build(submission, device, s):
    what = f"build_encoder({str(device)!r}, vocab={s['vocab']}, dim={s['dim']}, max_len={s['max_len']}, " \
           f"classes={s['classes']})"
    with uninitialised_memory_is_nan(), measure(device) as m, running(what, submission):
        model = submission.build_encoder(device, **s)
    if not isinstance(model, torch.nn.Module):
        fail(f"{what} should return the TinyEncoder, got {type(model).__name__}.")
    return model, m, what


def tensors_of(model, what):
    named = dict(model.named_parameters())
    named.update(model.named_buffers())
    for name in ("embed.weight", "norm.weight", "norm.bias", "head.weight", "head.bias", "positions"):
        if name not in named:
            fail(f"{what} returned a model without {name}: keep TinyEncoder as it is.")
    return named


def test_puts_every_tensor_on_the_device(submission, device):
    model, _, what = build(submission, device, sizes())
    for name, t in tensors_of(model, what).items():
        if canonical(t.device) != canonical(device):
            fail(f"{what} returned a model whose {name} is on {t.device}, not on {device}.")


def test_initialises_the_weights(submission, device):
    s = sizes()
    model, _, what = build(submission, device, s)
    named = {name: t.detach().cpu().double() for name, t in tensors_of(model, what).items()}
    for name, t in named.items():
        if name != "positions" and t.isnan().any():
            fail(UNINITIALISED.format(what=f"{what}: {name}"))
    if not (torch.equal(named["norm.weight"], torch.ones_like(named["norm.weight"]))
            and torch.equal(named["norm.bias"], torch.zeros_like(named["norm.bias"]))):
        fail(f"{what}: the layer norm's weight is not 1 everywhere or its bias not 0: initialise it as nn.LayerNorm "
             "does (model.norm.reset_parameters()).")
    embed = named["embed.weight"]
    if not (abs(embed.mean().item()) < 0.2 and 0.8 < embed.std().item() < 1.2):
        fail(f"{what}: the embedding's weights have mean {embed.mean().item():.3g} and standard deviation "
             f"{embed.std().item():.3g}; nn.Embedding draws them from N(0, 1) (model.embed.reset_parameters()).")
    bound = 1 / math.sqrt(s["dim"])
    head = named["head.weight"]
    if not (head.abs().max().item() <= bound and 0.7 < head.std().item() / (bound / math.sqrt(3)) < 1.3
            and named["head.bias"].abs().max().item() <= bound):
        fail(f"{what}: the head's weights are not drawn as nn.Linear draws them (uniform within ±1/sqrt(dim) = "
             f"±{bound:.3g}): call model.head.reset_parameters().")


def test_fills_in_the_position_table(submission, device):
    s = sizes()
    model, _, what = build(submission, device, s)
    positions = tensors_of(model, what)["positions"].detach()
    if positions.isnan().any():
        fail(UNINITIALISED.format(what=f"{what}: the positions buffer") + " reset_parameters() does not know "
             "this buffer: to_empty leaves it uninitialised, and a checkpoint does not hold it (persistent=False). "
             "Compute it again on the device: model.positions.copy_(sinusoids(max_len, dim)).")
    expect_close(positions, reference_positions(s["max_len"], s["dim"]), f"{what}: the positions buffer",
                 atol=1e-5, rtol=1e-5)


def test_copies_no_weight_from_the_cpu(submission, device):
    s = sizes()
    model, m, what = build(submission, device, s)
    crossed = sum(c.nbytes for c in m.h2d)
    embedding_bytes = s["vocab"] * s["dim"] * 4
    if device.type != "cpu" and crossed >= embedding_bytes:
        fail(f"{what} copied {crossed} bytes from the CPU to {device}: the weights were made on the CPU and copied "
             "over, which the statement rules out (the real model does not fit on the CPU). Give the model memory "
             "on the device (model.to_empty(device=device), or build it under torch.device(device)) and initialise "
             "it there.")


def test_the_model_runs_on_the_device(submission, device):
    s = sizes()
    model, _, what = build(submission, device, s)
    tokens = torch.randint(0, s["vocab"], (3, s["max_len"] - 2)).to(device)
    with running(f"the model built by {what}, called on tokens on {device}", submission):
        out = model(tokens)
    if out.shape != (3, s["classes"]) or not torch.isfinite(out.detach().cpu()).all():
        fail(f"the model built by {what} returned {tuple(out.shape)} with non-finite values: an uninitialised "
             "tensor is still in it.")
