"""Grader for last_token: the gather index must be built on hidden's device; the result must be each
sequence's last real token, on that device, without copies back to the CPU."""

import random

import torch

from grader.expect import expect_close, expect_device, fail, measure, running

EXPLAIN = ("the index passed to gather was made on cpu by torch.tensor(lengths), while hidden is on {device}: the "
           "traceback shows the gather line, but the culprit is the line that created the index. Create it on "
           "hidden.device.")


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
    with running("LastTokenPooler()(hidden, lengths)", submission, explain_device_error=EXPLAIN.format(device=device)):
        return submission.LastTokenPooler().to(device)(hd, lengths)


def test_pools_on_the_device_of_hidden(submission, device):
    hidden, lengths, hd = draw(device)
    out = pool(submission, hd, lengths, device)
    expect_device(out, device, "the pooled vectors", "build the index on hidden.device.")


def test_picks_the_last_real_token(submission, device):
    hidden, lengths, hd = draw(device)
    expect_close(pool(submission, hd, lengths, device), reference(hidden, lengths), "the pooled vectors")


def test_keeps_the_dtype(submission, device):
    hidden, lengths, hd = draw(device, torch.float64)
    out = pool(submission, hd, lengths, device)
    if out.dtype != torch.float64:
        fail(f"pooling a float64 batch returned {out.dtype}: pooling selects values, it should not convert them.")


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
