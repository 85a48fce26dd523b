"""Grader for saved_mask: a mask that __init__ rebuilds must be a non-persistent buffer: out of state_dict(),
so checkpoints load across max_len, and still moved by model.to(device). The layer attends to the past only for
every length the statement allows, 1 to max_len, and keeps the dtype of x."""

import math
import random

import torch

from grader.engine.expect import expect_close, expect_device, fail, running

FIX = 'register it with self.register_buffer("mask", ..., persistent=False)'


def sizes():
    return random.choice([4, 8, 12]), random.randint(10, 20), random.randint(24, 40)


def make(submission, dim, max_len, device=None):
    what = f"CausalAttention({dim}, {max_len})" + (f".to({str(device)!r})" if device is not None else "")
    with running(what, submission):
        model = submission.CausalAttention(dim, max_len)
        return model.to(device) if device is not None else model


def reference(model, x):
    """Causal attention computed here from the layer's weights, on the CPU."""
    w = model.qkv.weight.detach().cpu().double()
    b = model.qkv.bias.detach().cpu().double()
    q, k, v = (x.double() @ w.T + b).chunk(3, dim=-1)
    T, D = x.shape[1], x.shape[2]
    scores = q @ k.transpose(1, 2) / math.sqrt(D)
    scores = scores + torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    return (scores.softmax(-1) @ v).float()


def run(submission, model, x, device):
    with running(f"model(x) with x of shape {tuple(x.shape)} on {device}", submission,
                 explain_device_error=f"the mask must move with the model: keep it a buffer, {FIX}."):
        return model(x.to(device))


def test_checkpoint_holds_only_the_weights(submission, device):
    dim, _, max_len = sizes()
    model = make(submission, dim, max_len, device)
    keys = list(model.state_dict())
    params = [name for name, _ in model.named_parameters()]
    extra = [k for k in keys if k not in params]
    if extra:
        fail(f"state_dict() of CausalAttention({dim}, {max_len}) saves {', '.join(extra)} besides the weights: "
             f"a {max_len}x{max_len} mask that __init__ rebuilds from max_len goes into every checkpoint and "
             f"makes it unloadable into a layer with another max_len. To keep it out of checkpoints, {FIX}.")
    if sorted(keys) != sorted(params):
        fail(f"state_dict() of CausalAttention holds {keys}; it should hold the weights {params}.")


def test_mask_moves_with_the_model(submission, device):
    dim, _, max_len = sizes()
    model = make(submission, dim, max_len, device)
    buffers = dict(model.named_buffers())
    if "mask" not in buffers:
        fail(f"CausalAttention.mask is not a registered buffer any more, so model.to(device) does not move it "
             f"and it costs a copy or a mismatch on every call. Keep it a buffer: {FIX}.")
    expect_device(buffers["mask"], device, f"CausalAttention.mask after model.to({str(device)!r})", FIX + ".")
    if any(name == "mask" for name, _ in model.named_parameters()):
        fail("CausalAttention.mask is a parameter: the optimizer would see it. A fixed mask is a buffer.")


def test_loads_a_checkpoint_from_another_max_len(submission, device):
    dim, short, long = sizes()
    trained = make(submission, dim, short)
    checkpoint = {k: v.detach().clone() for k, v in trained.state_dict().items()}
    for src, dst in ((short, long), (long, short)):
        target = make(submission, dim, dst, device)
        with running(f"CausalAttention({dim}, {dst}).load_state_dict(checkpoint of CausalAttention({dim}, {src}))",
                     submission):
            try:
                target.load_state_dict(checkpoint)
            except RuntimeError as exc:
                if "Missing key" in str(exc) and '"mask"' in str(exc):
                    fail(f"a checkpoint of CausalAttention({dim}, {src}) does not load into CausalAttention({dim}, "
                         f"{dst}): load_state_dict asks for the mask, which the checkpoint lacks. It still expects "
                         "every persistent buffer, whatever state_dict() left out; to keep the mask out of both, "
                         f"{FIX}.")
                if "size mismatch" in str(exc):
                    fail(f"a checkpoint of CausalAttention({dim}, {src}) does not load into CausalAttention({dim}, "
                         f"{dst}): {str(exc).strip().splitlines()[-1].strip()} The mask is in the checkpoint; to "
                         f"keep it out, {FIX}.")
                raise
        if src != short:
            continue
        x = torch.randn(2, random.randint(3, short), dim)
        expect_close(run(submission, target, x, device), reference(trained, x),
                     f"a CausalAttention({dim}, {dst}) loaded from the checkpoint, applied to x")
        checkpoint = {k: v.detach().clone() for k, v in make(submission, dim, long).state_dict().items()}


def test_attends_to_the_past_only(submission, device):
    dim, max_len, _ = sizes()
    model = make(submission, dim, max_len, device)
    for T in (1, random.randint(2, max_len - 1), max_len):  # every length the statement allows, T <= max_len
        x = torch.randn(3, T, dim)
        out = run(submission, model, x, device)
        expect_device(out, device, "model(x)", "keep every tensor of forward on x's device.")
        if out.dtype != x.dtype:
            fail(f"model(x) for a float32 x returned {out.dtype}: keep the dtype of x.")
        expect_close(out, reference(model, x), f"model(x) for x of shape {tuple(x.shape)}, max_len {max_len}")
