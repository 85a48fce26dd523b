"""Grader for causal_mask: the mask is right, lands on the requested device, and is made there rather than
made on the CPU and copied on every call (host-to-device copies counted with grader.engine.instruments.measure,
alike on every leg; on the CPU there is nothing to copy). A mask built once per size and device and then
reused (a cache) is accepted: only a call after a first one with the same arguments is counted, and the same
size is asked on the CPU first, so a cache must tell devices apart. masked_attention keeps the scores' dtype
(float32, float64, float16, bfloat16) and takes any number of leading dimensions, none included."""

import torch

from grader.engine.expect import expect_close, expect_device, fail, measure, no_round_trips, running

# Why this grader refuses `make on the CPU, then .to(device)` when noise_batch accepts it: the rule of
# grader/AUTHORING.md ("What a grader refuses"), said to the learner who met noise_batch first.
COPIED = ("the mask is created on the CPU and copied to {device} on every call: create it on the device "
          "(pass device= to the function that makes it). Its values and device are right, but this exercise "
          "asks for no copy per call (noise_batch asked only where its result lives, so .to(device) passed "
          "there): each call pays a host-to-device transfer that making the mask on the device avoids.")


def reference_mask(size: int) -> torch.Tensor:
    i = torch.arange(size)
    return i[None, :] > i[:, None]


def reference_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    return scores.double().masked_fill(reference_mask(T), float("-inf")).softmax(dim=-1)


def size() -> int:
    return int(torch.randint(5, 17, ()))


def mask(submission, n, device):
    with running(f"causal_mask({n}, {str(device)!r})", submission):
        return submission.causal_mask(n, device)


def attention(submission, scores, device):
    with running(f"masked_attention(scores) with scores of shape {tuple(scores.shape)} on {device}", submission):
        return submission.masked_attention(scores)


def describe(copies) -> str:
    total = sum(c.nbytes for c in copies)
    return f"{len(copies)} host-to-device cop{'y' if len(copies) == 1 else 'ies'} ({total} bytes)"


def test_mask_is_right_and_on_the_device(submission, device):
    n = size()
    mask(submission, n, "cpu")  # the same size on another device first: a cache must tell devices apart
    out = mask(submission, n, device)
    expect_device(out, device, f"causal_mask({n}, {str(device)!r})", "create it on the requested device.")
    if out.dtype != torch.bool or tuple(out.shape) != (n, n):
        fail(f"causal_mask({n}, ...) should be a bool tensor of shape ({n}, {n}); got {out.dtype} "
             f"{tuple(out.shape)}.")
    if not torch.equal(out.cpu(), reference_mask(n)):
        fail(f"causal_mask({n}, ...) has the wrong values: True exactly above the diagonal (key after query).")


# Scores of every float dtype keep it (a -inf bias made in float32 would turn half-precision scores into float32),
# each with the rounding it leaves; and any number of leading dimensions, "(..., T, T)", none included.
DTYPES = {torch.float32: 1e-5, torch.float64: 1e-9, torch.float16: 2e-3, torch.bfloat16: 2e-2}
LEADING = ((), (3,), (2, 3))


def test_attention_is_right_and_stays_on_the_device(submission, device):
    T = size()
    for lead, (dtype, tol) in zip(LEADING * 2, DTYPES.items()):
        if dtype == torch.float64 and device.type == "mps":
            continue  # MPS has no float64
        scores = torch.randn(*lead, T, T).to(dtype)
        what = f"masked_attention(scores) for {str(dtype).removeprefix('torch.')} scores of shape {tuple(scores.shape)}"
        out = attention(submission, scores.to(device), device)
        expect_device(out, device, "masked_attention's result", "keep the work on the device of the scores.")
        if out.dtype != dtype:
            fail(f"{what} returned {out.dtype}: the result keeps the dtype of the scores; make any helper "
                 "(a mask, a bias) in scores.dtype or use masked_fill, which keeps it.")
        expect_close(out, reference_attention(scores), what, atol=tol, rtol=tol)


def test_mask_is_made_on_the_device_not_copied(submission, device):
    n = size()
    mask(submission, n, device)  # a first call may fill a cache
    with measure(device) as m:
        mask(submission, n, device)
    if m.h2d:
        fail(f"causal_mask({n}, {str(device)!r}) made {describe(m.h2d)}: {COPIED.format(device=device)}")


def test_attention_copies_nothing_back_and_forth(submission, device):
    T = size()
    scores = torch.randn(4, T, T, device=device)
    attention(submission, scores, device)  # a first call may fill a cache
    with no_round_trips(device, "masked_attention") as m:
        attention(submission, scores, device)
    if m.h2d:
        fail(f"masked_attention made {describe(m.h2d)} for scores already on {device}: "
             f"{COPIED.format(device=device)}")
