"""Grader for positional_encoding: a constant table must be a buffer, so that model.to() moves it; the result
keeps the embeddings' dtype, for sequences up to the table's length."""

import math

import torch

from grader.engine.expect import canonical, devices_in, expect_close, expect_device, fail, running

FIX = "register it as a buffer (self.register_buffer) so that model.to() moves it."


def reference_table(max_len: int, dim: int) -> torch.Tensor:
    """The sinusoidal table of the exercise, written here so that a changed table cannot pass."""
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    table = torch.zeros(max_len, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq)
    return table.float()


def explain(device):
    """Where the table was, from the devices the error names: left on the CPU by model.to(), or made on the
    current accelerator, which is not the model's device when the model is on another card."""
    def explanation(exc) -> str:
        others = [d for d in devices_in(exc) if canonical(d) != canonical(device)]
        if "cpu" in others or not others:
            return f"AddPositions.table stayed on cpu: {FIX}"
        return (f"AddPositions.table is on {others[0]}, not on {device} where the model was moved: a tensor put on "
                f"a device of its own is not moved by model.to(). {FIX[0].upper()}{FIX[1:]}")
    return explanation


def sizes():
    """Fresh sizes each run: max_len in [12, 24), an even dim in [6, 16], a sequence shorter than max_len."""
    max_len = int(torch.randint(12, 24, ()))
    dim = 2 * int(torch.randint(3, 9, ()))
    T = int(torch.randint(3, max_len, ()))
    return max_len, dim, T


def make(submission, device, max_len=16, dim=8):
    with running(f"AddPositions({max_len}, {dim}).to(device)", submission):
        return submission.AddPositions(max_len, dim).to(device)


def test_table_moves_with_the_model(submission, device):
    model = make(submission, device)
    table = getattr(model, "table", None)
    if table is None:
        fail("AddPositions has no `table` attribute any more; keep the name, change how it is stored.")
    expect_device(table, device, f"AddPositions.table after model.to({str(device)!r})", FIX)


def test_forward_on_the_device(submission, device):
    max_len, dim, T = sizes()
    model = make(submission, device, max_len, dim)
    for length in (T, max_len):  # a sequence as long as the table is one the module takes too
        x = torch.randn(int(torch.randint(1, 5, ())), length, dim)
        with running("model(x)", submission, explain_device_error=explain(device)):
            out = model(x.to(device))
        expect_device(out, device, "model(x)", FIX)
        if out.dtype != x.dtype:
            fail(f"model(x) for float32 embeddings returned {out.dtype}: adding the table must keep the embeddings' "
                 "dtype. Store the table in float32, as sinusoidal_table made it.")
        expect_close(out, x + reference_table(max_len, dim)[:length],
                     f"AddPositions({max_len}, {dim})(x) for a random x of shape {tuple(x.shape)}")


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
