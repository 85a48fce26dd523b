"""Grader for compiled_normalize: one graph under torch.compile, nothing read back to the host, x's values scaled.

What torch.compile captures is decided by TorchDynamo before any backend runs, and for this function it does
not depend on the device: torch._dynamo.explain traces the learner's normalize on CPU tensors on every leg (the
simulated device's Python tensors cannot be traced by Dynamo), which gives one verdict everywhere. Whether
Python waits for the device is judged on the leg's device, in eager mode, by the instruments."""

import random

import torch

from grader.engine.expect import expect_close, expect_device, expect_tensor, fail, no_round_trips, running

# Every float dtype "float tensor" allows, with its rounding.
DTYPES = {torch.float32: 1e-6, torch.float64: 1e-12, torch.float16: 1e-3, torch.bfloat16: 1e-2}


def draw(dtype=torch.float32):
    b, n = random.randint(3, 9), random.randint(4, 12)
    return (torch.randn(b, n, dtype=torch.float64) * random.choice([0.01, 1.0, 30.0])).to(dtype)


def reference(x):
    peak = x.double().abs().max()
    return (x.double() / peak if peak > 0 else torch.zeros_like(x, dtype=torch.float64)).to(x.dtype)


def call(submission, x, what):
    with running(what, submission):
        return expect_tensor(submission.normalize(x), "the value normalize returns")


def test_compiles_to_one_graph(submission, device):
    import torch._dynamo

    # The learner's own function: Dynamo would otherwise trace the grader's wrapper that vets what it returns (what
    # explain runs is not read); and the function under a learner's @torch.compile.
    fn = getattr(submission.normalize, "__wrapped__", submission.normalize)
    fn = getattr(fn, "_torchdynamo_orig_callable", fn)
    torch._dynamo.reset()
    with running("torch._dynamo.explain(normalize)(x)", submission):
        explained = torch._dynamo.explain(fn)(draw())
    if explained.graph_break_count or explained.graph_count != 1:
        where = []
        for reason in explained.break_reasons[:2]:
            frame = next((f for f in reversed(reason.user_stack or []) if f.filename == submission.filename), None)
            line = f"line {frame.lineno}, `{(frame.line or '').strip()}`" if frame else "normalize"
            where.append(f"{line}: {reason.reason.splitlines()[0]}")
        fail(f"torch.compile splits normalize into {explained.graph_count} graphs (a graph break at "
             + "; ".join(where or ["an unknown place"]) + "). A value read into Python (.item(), float(t), "
             "int(t), .tolist()) or a Python if on a tensor ends the graph, and on an accelerator makes Python wait "
             "for the device. Keep the peak a tensor, and choose with torch.where instead of if.")


def test_reads_nothing_back_from_the_device(submission, device):
    x = draw().to(device)
    with no_round_trips(device, "normalize"):
        call(submission, x, f"normalize(x) with x on {device}")


def test_scales_to_a_peak_of_one_in_every_dtype(submission, device):
    for dtype, tol in DTYPES.items():
        if dtype == torch.float64 and device.type == "mps":
            continue
        x = draw(dtype)
        what = f"normalize of a {str(dtype).removeprefix('torch.')} batch"
        out = call(submission, x.to(device), what)
        expect_device(out, device, "normalize's result", "return it where x is.")
        if out.dtype != dtype or out.shape != x.shape:
            fail(f"{what} returned {out.dtype} of shape {tuple(out.shape)}; it promises x's dtype and shape.")
        expect_close(out.cpu(), reference(x), what, atol=tol, rtol=tol)


def test_returns_zeros_for_a_batch_of_zeros(submission, device):
    for dtype in DTYPES:
        if dtype == torch.float64 and device.type == "mps":
            continue
        x = torch.zeros(random.randint(2, 5), random.randint(3, 6), dtype=dtype)
        what = f"normalize of a {str(dtype).removeprefix('torch.')} batch of zeros"
        out = call(submission, x.to(device), what).cpu()
        if out.isnan().any():
            fail(f"{what} returned NaN: 0 / 0. A tiny constant such as 1e-12 is 0 in float16 (its smallest value "
                 "is about 6e-8): choose the divisor with torch.where(peak == 0, 1, peak), or use "
                 "torch.finfo(x.dtype).tiny.")
        if out.dtype != dtype or not torch.equal(out, x):
            fail(f"{what} returned {out.dtype} values other than zeros; it promises zeros of x's dtype.")
