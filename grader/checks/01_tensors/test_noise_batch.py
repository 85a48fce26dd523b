"""Grader for noise_batch: the noise must be created on the requested device."""

import torch

from grader.expect import expect_device, expect_tensor, fail, running


def test_noise_lands_on_the_requested_device(submission, device):
    with running(f"make_noise_batch(4, 3, {str(device)!r})", submission):
        noise = submission.make_noise_batch(4, 3, device)
    expect_device(
        noise, device, "the tensor returned by make_noise_batch",
        "pass device= to the function that creates it (torch.randn(..., device=device)).",
    )


def test_noise_has_the_right_shape_and_dtype(submission, device):
    with running("make_noise_batch(5, 7, ...)", submission):
        noise = expect_tensor(submission.make_noise_batch(5, 7, device), "make_noise_batch's result")
    if noise.shape != (5, 7) or noise.dtype != torch.float32:
        fail(f"make_noise_batch(5, 7, ...) should be float32 of shape (5, 7), got {noise.dtype} {tuple(noise.shape)}.")


def test_noise_is_random_and_standard_normal(submission, device):
    torch.manual_seed(0)
    with running("make_noise_batch(256, 64, ...)", submission):
        noise = submission.make_noise_batch(256, 64, device).detach().float().cpu()
    if noise.std() < 0.9 or noise.std() > 1.1 or noise.mean().abs() > 0.05:
        fail(f"the noise should be standard normal (mean 0, std 1); got mean {noise.mean():.3f}, std {noise.std():.3f}.")
