"""Grader for last_token: the gather index must be built on hidden's device; the result must be each
sequence's last real token, on that device, without copies back to the CPU."""

import random
import re

import torch

from grader.engine.expect import GradeFailure, expect_close, expect_device, fail, measure, running

EXPLAIN = ("the index passed to gather was made on cpu by torch.tensor(lengths), while hidden is on {device}: the "
           "traceback shows the gather line, but the culprit is the line that created the index. Create it on "
           "hidden.device.")


# The same mix, but with two devices of one kind: the index was made on the current device, not on hidden's.
EXPLAIN_INDEX = ("the index passed to gather was made on {other}, while hidden is on {device}: the traceback shows the "
                 "gather line, but the culprit is the line that created the index. A device given by its type alone "
                 "(device=hidden.device.type, '{kind}', torch.accelerator.current_accelerator()) means the current "
                 "device, not hidden's. Create the index on hidden.device itself, index included.")


def explain(text: str, device) -> str:
    """What the device error in `text` says about where the index was made."""
    named = set(re.findall(r"\b(cpu|[a-z]+:\d+)\b", text.split(" raised ", 1)[-1])) - {str(device)}
    if "cpu" in named or not named:
        return EXPLAIN.format(device=device)
    return EXPLAIN_INDEX.format(other=sorted(named)[0], device=device, kind=device.type)


def draw(device, dtype=torch.float32):
    b, t, d = random.randint(3, 7), random.randint(4, 9), random.randint(2, 6)
    lengths = [random.randint(1, t) for _ in range(b)]
    lengths[0] = t                                      # one full sequence, one of length 1 at least
    lengths[-1] = 1
    hidden = torch.randn(b, t, d, dtype=dtype)
    return hidden, lengths, hidden.to(device)


def reference(hidden, lengths):
    return torch.stack([hidden[i, n - 1] for i, n in enumerate(lengths)])


def pool(submission, hd, lengths, device):
    try:
        with running("LastTokenPooler()(hidden, lengths)", submission):
            return submission.LastTokenPooler().to(device)(hd, lengths)
    except GradeFailure as exc:
        text = str(exc)
        if re.search(r"same device|to be on|device type", text):
            fail(f"{text}\n{explain(text, device)}")
        raise


def test_pools_on_the_device_of_hidden(submission, device):
    hidden, lengths, hd = draw(device)
    out = pool(submission, hd, lengths, device)
    expect_device(out, device, "the pooled vectors", "build the index on hidden.device.")


def test_picks_the_last_real_token(submission, device):
    hidden, lengths, hd = draw(device)
    expect_close(pool(submission, hd, lengths, device), reference(hidden, lengths), "the pooled vectors")


def test_keeps_the_dtype(submission, device):
    for dtype in (torch.float64, torch.float16, torch.bfloat16):  # "float tensor": any float dtype, half ones too
        if dtype == torch.float64 and device.type == "mps":
            continue  # MPS has no float64
        hidden, lengths, hd = draw(device, dtype)
        out = pool(submission, hd, lengths, device)
        if not isinstance(out, torch.Tensor) or out.dtype != dtype:
            fail(f"pooling a {str(dtype).removeprefix('torch.')} batch returned "
                 f"{getattr(out, 'dtype', type(out).__name__)}: pooling selects values, it should not convert them.")
        expect_close(out, reference(hidden, lengths), f"the pooled vectors of a {str(dtype).removeprefix('torch.')} batch",
                     atol=0, rtol=0)


def test_no_copies_back_to_the_cpu(submission, device):
    hidden, lengths, hd = draw(device)
    with measure(device) as m:
        pool(submission, hd, lengths, device)
    if m.waits or m.data_dependent:
        fail(f"the pooler made {m.describe_waits()}"
             + (f" and ran {', '.join(m.data_dependent)} on {device}" if m.data_dependent else "")
             + ": the positions are known on the host already; build the index on the device and gather there.")
    if len(m.h2d) > 1:
        fail(f"the pooler copied {len(m.h2d)} tensors from the CPU to {device}: one copy of the lengths is all it "
             "needs; create the index on hidden.device instead of moving pieces over.")
