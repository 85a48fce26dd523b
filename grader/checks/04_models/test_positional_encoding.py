"""Grader for positional_encoding: a constant table must be a buffer, so that model.to() moves it."""

import torch

from grader.expect import expect_close, expect_device, fail, running

FIX = "register it as a buffer (self.register_buffer) so that model.to() moves it."


def make(submission, device):
    with running("AddPositions(16, 8).to(device)", submission):
        return submission.AddPositions(16, 8).to(device)


def test_table_moves_with_the_model(submission, device):
    model = make(submission, device)
    table = getattr(model, "table", None)
    if table is None:
        fail("AddPositions has no `table` attribute any more; keep the name, change how it is stored.")
    expect_device(table, device, f"AddPositions.table after model.to({str(device)!r})", FIX)


def test_forward_on_the_device(submission, device):
    model = make(submission, device)
    x = torch.zeros(2, 5, 8, device=device)
    with running("model(x)", submission, explain_device_error=f"AddPositions.table stayed on cpu: {FIX}"):
        out = model(x)
    expect_device(out, device, "model(x)", FIX)
    expect_close(out[0], submission.sinusoidal_table(16, 8)[:5], "model(zeros)")


def test_table_is_a_buffer_not_a_parameter(submission, device):
    model = make(submission, device)
    names = [name for name, _ in model.named_parameters()]
    if "table" in names:
        fail("AddPositions.table is an nn.Parameter: the optimizer would see it and it would be treated as "
             "weights. A fixed table belongs in a buffer.")
    if names:
        fail(f"AddPositions now has parameters {names}: a fixed table needs none.")
    if "table" not in dict(model.named_buffers()):
        fail(f"AddPositions.table is not a registered buffer: {FIX}")
