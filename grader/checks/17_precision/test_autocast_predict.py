"""Grader for autocast_predict: the matrix products run in bfloat16 on the input's device, whatever it is.

Judged by what ran, not by the source: a forward hook on each nn.Linear of a fresh model records the dtype and
device of its output, which under autocast is the dtype the matrix product ran in. The logits are compared with
the CPU's float32 result within bfloat16's rounding, and the model's parameters must come back unchanged."""

import random
import warnings

import torch
from torch import nn

from grader.engine.expect import expect_close, expect_device, expect_tensor, fail, running

FIX = ("torch.autocast(device_type=...) changes the operations of the device type it names, and only those: name "
       "the type of the device the data is on (x.device.type), not a fixed 'cuda'.")


def draw():
    b, f, h, c = random.randint(24, 48), random.randint(6, 12), random.randint(16, 32), random.randint(3, 6)
    model = nn.Sequential(nn.Linear(f, h), nn.ReLU(), nn.Linear(h, c)).eval()
    return model, torch.randn(b, f)


def run(submission, device):
    """predict on the leg's device; the (dtype, device) of each nn.Linear's output, the result, the warnings."""
    model, x = draw()
    reference = model(x).detach()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.to(device)
    ran = []
    hooks = [m.register_forward_hook(lambda mod, args, out: ran.append((out.dtype, out.device)))
             for m in model.modules() if isinstance(m, nn.Linear)]
    try:
        with warnings.catch_warnings(record=True) as caught, running("predict(model, x)", submission):
            warnings.simplefilter("always")
            out = submission.predict(model, x.to(device))
    finally:
        for h in hooks:
            h.remove()
    said = [str(w.message) for w in caught if "autocast" in str(w.message) or "not available" in str(w.message)]
    return model, before, reference, out, ran, said


def test_runs_the_matrix_products_in_bfloat16_on_the_inputs_device(submission, device):
    _, _, _, _, ran, said = run(submission, device)
    if not ran:
        fail("predict never ran the model's nn.Linear layers: call the model on x.")
    wrong = [(dt, d) for dt, d in ran if dt != torch.bfloat16]
    if wrong:
        dt, d = wrong[0]
        warned = f" (PyTorch warned: {said[0].splitlines()[0]!r})" if said else ""
        if dt == torch.float32:
            fail(f"the model's matrix products ran in float32 on {d}: the autocast region did not apply to {device}"
                 f"{warned}. " + FIX)
        fail(f"the model's matrix products ran in {str(dt).removeprefix('torch.')} on {d}, but predict promises "
             "bfloat16: give torch.autocast dtype=torch.bfloat16 (each device type has its own default dtype).")
    if any(d != device for _, d in ran):
        fail(f"the model ran on {ran[0][1]}, but x was on {device}: run it where the data is.")


def test_returns_float32_logits_on_the_inputs_device(submission, device):
    _, _, reference, out, _, _ = run(submission, device)
    out = expect_tensor(out, "the logits predict returns")
    expect_device(out, device, "the logits", "return them where x is.")
    if out.dtype != torch.float32:
        fail(f"predict returned {out.dtype} logits; it promises float32: convert the result with .float().")
    expect_close(out.cpu(), reference, "the logits", atol=0.1, rtol=0.05)


def test_leaves_the_models_parameters_float32(submission, device):
    model, before, _, _, _, _ = run(submission, device)
    for name, value in model.state_dict().items():
        if value.dtype != torch.float32 or value.device != device:
            fail(f"after predict the model's {name} is {value.dtype} on {value.device}: the model is the caller's "
                 "and stays float32 where it was. Let autocast cast for the matrix products instead of converting "
                 "the model (.bfloat16(), .to(dtype)).")
        if not torch.equal(value.cpu(), before[name]):
            fail(f"predict changed the model's {name}: the model is the caller's; leave its values as they are.")
