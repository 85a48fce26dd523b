"""Grader for noise_batch: the noise must be on the requested device (given as a torch.device or by its name, as
the statement's "cuda:0"), right in shape, dtype and distribution.

What the exercise asks is where its result lives, so noise made on the CPU and moved with .to(device) passes
(tests/submissions/noise_batch/right_made_then_moved.py): copies are not counted here. causal_mask, whose
statement asks for no copy per call, refuses the same pattern and says why (grader/AUTHORING.md, "What a grader
refuses")."""

import torch

from grader.engine.expect import expect_device, expect_tensor, fail, running


def spelled(device) -> str:
    """The device argument as the learner would write it: torch.device('sim:1') or 'sim:1'."""
    return repr(device) if isinstance(device, str) else f"torch.device({str(device)!r})"


def make(submission, batch_size, features, device):
    call = f"make_noise_batch({batch_size}, {features}, {spelled(device)})"
    with running(call, submission):
        noise = submission.make_noise_batch(batch_size, features, device)
    return expect_tensor(noise, f"the value returned by {call}")


def test_noise_lands_on_the_requested_device(submission, device):
    # Training code passes the model's device as a torch.device or as its name ("cuda:0"): both are devices.
    for requested in (device, str(device)):
        noise = make(submission, 4, 3, requested)
        expect_device(noise, device, f"the tensor returned by make_noise_batch(4, 3, {spelled(requested)})",
                      "pass device= to the function that creates it.")


def test_noise_has_the_right_shape_and_dtype(submission, device):
    for shape in ((int(torch.randint(2, 9, ())), int(torch.randint(2, 9, ()))), (1, 1)):
        noise = make(submission, *shape, device)
        if noise.shape != shape or noise.dtype != torch.float32:
            fail(f"make_noise_batch{shape[:2]} should be float32 of shape {shape}, got {noise.dtype} "
                 f"{tuple(noise.shape)}.")


def test_noise_is_fresh_standard_normal_noise(submission, device):
    first = make(submission, 256, 64, device).detach().float().cpu()
    second = make(submission, 256, 64, device).detach().float().cpu()
    if torch.equal(first, second):
        fail("two calls of make_noise_batch returned the same numbers: noise must be new on every call "
             "(is something re-seeding the random generator?).")
    if not (0.9 < first.std() < 1.1) or first.mean().abs() > 0.05:
        fail(f"the noise should be standard normal (mean 0, std 1); got mean {first.mean():.3f}, std {first.std():.3f}.")
