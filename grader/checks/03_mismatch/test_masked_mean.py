"""Grader for masked_mean: helper tensors must be created on the input's device, with no round trips."""

import torch

from grader.expect import expect_close, expect_device, fail, no_round_trips, running

EXPLAIN = "the mask is created on cpu while the input is on {device}: create helper tensors from x.device."


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
    with running(what, submission, explain_device_error=EXPLAIN.format(device=device)):
        return submission.masked_mean(xd, ld)


def test_runs_on_the_device_of_its_inputs(submission, device):
    x, lengths, xd, ld = inputs(device)
    out = call(submission, device, xd, ld, f"masked_mean(x, lengths) with both on {device}")
    expect_device(out, device, "masked_mean's result", "keep every tensor you create on x.device.")


def test_ignores_the_padding(submission, device):
    x, lengths, xd, ld = inputs(device)
    expect_close(call(submission, device, xd, ld), reference(x, lengths), "masked_mean(x, lengths)")


def test_keeps_the_inputs_dtype(submission, device):
    x, lengths, xd, ld = inputs(device, torch.float64)
    out = call(submission, device, xd, ld, "masked_mean of a float64 batch")
    if out.dtype != torch.float64:
        fail(f"masked_mean of a float64 batch returned {out.dtype}: take helper dtypes from x.dtype too.")
    expect_close(out, reference(x, lengths), "masked_mean of a float64 batch")


def test_does_not_move_data_back_and_forth(submission, device):
    _, _, xd, ld = inputs(device)
    with no_round_trips(device, "masked_mean"):
        call(submission, device, xd, ld)
