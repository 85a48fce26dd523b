"""Grader for prefetch_predict: a batch copied on the copy stream and read on the compute stream must not have its
block reused before the compute stream has read it.

The model the grader passes spins the compute stream for 20 ms before its layers run (grader.engine.expect.spin), so
on a GPU the next copy, on an idle copy stream, lands in a reused block long before the model reads it; the
simulator poisons (NaN) the outputs of an op whose input block was handed to another stream's tensor before a
wait ordered the two (grader/simulated/races.py). The checks: the outputs are right; Python did not wait for the
device (the statement asks for a function that only queues work). A fix that copies on the current stream has no
race and passes: where the copies ran is not judged (a copy can be made in too many ways to follow each)."""

import torch

from grader.engine.expect import expect_close, expect_device, expect_tensor, fail, measure, running, spin

RACE = ("predict_all(...) returned wrong outputs for batch {i} (of {n}): its block of device memory was handed to "
        "the next batch while the model still read it. The batch was allocated on the copy stream and freed when "
        "the loop moved on; the caching allocator knows only the stream a block was allocated on, so it gave the "
        "block to the next copy at once, while the compute stream's queued work still read it. Tell the "
        "allocator that the compute stream uses the batch (x.record_stream(compute)), or make the copy stream "
        "wait for the compute stream before each copy.")


class SlowModel(torch.nn.Module):
    """A model whose stream stays busy 20 ms before its layers run."""

    def __init__(self, f, o):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(f, 16), torch.nn.ReLU(), torch.nn.Linear(16, o))

    def forward(self, x):
        spin(x.device, 20)
        return self.layers(x)


def setup(device):
    """A fresh model and batches each run: 4 to 6 batches of one row count (so that a freed block fits the next
    batch exactly), the last one shorter."""
    f, o, rows, count = (int(torch.randint(lo, hi, ())) for lo, hi in ((4, 9), (2, 6), (6, 12), (4, 7)))
    model = SlowModel(f, o)
    batches = [torch.randn(rows, f) for _ in range(count - 1)] + [torch.randn(rows // 2, f)]
    with torch.no_grad():
        want = torch.cat([model.layers(b) for b in batches])
    return model.to(device), batches, want


def call(submission, device, model, batches):
    with running("predict_all(model, batches)", submission):
        return submission.predict_all(model, batches)


def test_outputs_are_right(submission, device):
    model, batches, want = setup(device)
    out = expect_tensor(call(submission, device, model, batches), "predict_all(...)")
    expect_device(out, device, "the outputs", "keep them where the model is.")
    got = out.cpu()
    if got.shape == want.shape:
        start = 0
        for i, b in enumerate(batches):
            rows = slice(start, start + b.shape[0])
            start += b.shape[0]
            if not torch.allclose(got[rows], want[rows], atol=1e-4, rtol=1e-4):
                fail(RACE.format(i=i, n=len(batches)))
    expect_close(got, want, "predict_all(...)", atol=1e-4, rtol=1e-4)


def test_python_does_not_wait_for_the_device(submission, device):
    model, batches, _ = setup(device)
    with measure(device) as m:
        call(submission, device, model, batches)
    if m.waits:
        fail(f"predict_all(...) made {m.describe_waits()}: Python waited for {device}, and the function is meant only "
             "to queue work. Order the streams on the device instead: stream.wait_stream(other) or "
             "stream.wait_event(event) make a stream wait without stopping Python.")

