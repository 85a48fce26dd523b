"""Grader for masked_mean: helper tensors must be created on the input's device, with no round trips."""

import torch

from grader.engine.expect import (canonical, devices_in, expect_close, expect_device, expect_tensor, fail, no_round_trips,
                           running)


def explain(device):
    """What the device error says about the helper tensor, from the devices it names: a mask made without
    device= is on the CPU; one made with the device's kind alone (x.device.type) is on the current device."""
    def explanation(exc) -> str:
        others = [d for d in devices_in(exc) if canonical(d) != canonical(device)]
        if "cpu" in others or not others:
            return f"the mask is created on cpu while the input is on {device}: create helper tensors from x.device."
        return (f"a helper tensor is on {others[0]} while the input is on {device}: a device given by its kind "
                "alone (x.device.type, 'cuda') means the current device, not x's. Create helper tensors with "
                "device=x.device, which keeps the index.")
    return explanation


def reference(x, lengths):
    return torch.stack([x[i, : int(n)].mean(dim=0) for i, n in enumerate(lengths)])


def inputs(device, dtype=torch.float32):
    """A fresh padded batch each run: sizes vary, one sequence is full, one is a single step."""
    B, T, D = (int(torch.randint(lo, hi, ())) for lo, hi in ((3, 7), (5, 10), (2, 6)))
    x = torch.randn(B, T, D, dtype=dtype)
    lengths = torch.randint(1, T + 1, (B,))
    lengths[0], lengths[1] = T, 1
    lengths = lengths[torch.randperm(B)]
    return x, lengths, x.to(device), lengths.to(device)


def call(submission, device, xd, ld, what="masked_mean(x, lengths)"):
    with running(what, submission, explain_device_error=explain(device)):
        return submission.masked_mean(xd, ld)


def test_runs_on_the_device_of_its_inputs(submission, device):
    x, lengths, xd, ld = inputs(device)
    out = call(submission, device, xd, ld, f"masked_mean(x, lengths) with both on {device}")
    expect_device(out, device, "masked_mean's result", "keep every tensor you create on x.device.")


def test_ignores_the_padding(submission, device):
    x, lengths, xd, ld = inputs(device)
    expect_close(call(submission, device, xd, ld), reference(x, lengths), "masked_mean(x, lengths)")
    if not torch.equal(xd.cpu(), x) or not torch.equal(ld.cpu(), lengths):
        fail("masked_mean changed the caller's x or lengths (an in-place operation such as masked_fill_ or "
             "x[mask] = 0): the caller still uses them. Make a new tensor instead (x * mask, x.masked_fill).")


# Every float dtype the statement allows ("float tensor"), each with what rounding it leaves: a helper made in a
# fixed dtype (.float(), .double()) changes the result's dtype for some of them, whichever x the grader tried first.
DTYPES = {torch.float32: 1e-5, torch.float64: 1e-9, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def test_keeps_the_inputs_dtype(submission, device):
    for dtype, tol in DTYPES.items():
        if dtype == torch.float64 and device.type == "mps":
            continue  # MPS has no float64
        x, lengths, xd, ld = inputs(device, dtype)
        what = f"masked_mean of a {str(dtype).removeprefix('torch.')} batch"
        out = expect_tensor(call(submission, device, xd, ld, what), what)
        if out.dtype != dtype:
            fail(f"{what} returned {out.dtype}: the mean keeps the dtype of x. Make the mask and the lengths in "
                 "x.dtype (.to(x.dtype)), not in a fixed float32 or float64.")
        expect_close(out, reference(x.double(), lengths).to(dtype), what, atol=tol, rtol=tol)


def test_does_not_move_data_back_and_forth(submission, device):
    _, _, xd, ld = inputs(device)
    with no_round_trips(device, "masked_mean"):
        call(submission, device, xd, ld)
