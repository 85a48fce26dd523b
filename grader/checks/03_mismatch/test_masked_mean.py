"""Grader for masked_mean: helper tensors must be created on the input's device."""

import torch

from grader.expect import expect_close, expect_device, running


def reference(x, lengths):
    out = torch.stack([x[i, : int(n)].mean(dim=0) for i, n in enumerate(lengths)])
    return out


def inputs(device):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 5, 4, generator=g)
    lengths = torch.tensor([5, 2, 1])
    return x, lengths, x.to(device), lengths.to(device)


def test_runs_on_the_inputs_device(submission, device):
    x, lengths, xd, ld = inputs(device)
    with running(
        f"masked_mean(x, lengths) with both on {device}", submission,
        explain_device_error=f"the mask is created on cpu while the input is on {device}: "
        "create helper tensors from x.device (torch.arange(T, device=x.device)).",
    ):
        out = submission.masked_mean(xd, ld)
    expect_device(out, device, "masked_mean's result", "keep every tensor you create on x.device.")


def test_ignores_the_padding(submission, device):
    x, lengths, xd, ld = inputs(device)
    with running("masked_mean(x, lengths)", submission,
                 explain_device_error="the mask is created on cpu: create helper tensors from x.device."):
        out = submission.masked_mean(xd, ld)
    expect_close(out, reference(x, lengths), "masked_mean(x, lengths)")
