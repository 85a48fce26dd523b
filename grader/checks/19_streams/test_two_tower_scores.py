"""Grader for two_tower_scores: what the side stream writes is read on the current stream only after a wait.

The image encoder the grader passes spins its stream for 20 ms before its layers run (grader.engine.expect.spin), so
on a GPU a read that no wait orders after it always comes too early; the simulator shows such a read as NaN
(grader/simulated/races.py). The checks: the scores are right; Python did not wait for the device (the
statement asks for a function that only queues work); the image encoder really ran on another stream than the
current one (running both on one stream hides the race and drops the overlap the statement asks for)."""

import torch
import torch.nn.functional as F

from grader.engine.expect import expect_close, expect_device, expect_tensor, fail, measure, running, spin


class SlowImageEncoder(torch.nn.Module):
    """An encoder whose stream stays busy 20 ms before its layers run; notes the stream it ran on."""

    def __init__(self, di, e):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(di, 32), torch.nn.ReLU(), torch.nn.Linear(32, e))
        self.streams = []

    def forward(self, x):
        self.streams.append(torch.accelerator.current_stream(x.device))
        spin(x.device, 20)
        return self.layers(x)


def setup(device):
    """Fresh encoders and inputs each run; the inputs reach the device by blocking copies (ready when the call
    starts)."""
    b, di, dt, e = (int(torch.randint(lo, hi, ())) for lo, hi in ((5, 12), (6, 10), (4, 9), (8, 16)))
    image_encoder = SlowImageEncoder(di, e)
    text_encoder = torch.nn.Sequential(torch.nn.Linear(dt, 24), torch.nn.Tanh(), torch.nn.Linear(24, e))
    images, texts = torch.randn(b, di), torch.randn(b, dt)
    with torch.no_grad():
        want = F.cosine_similarity(image_encoder.layers(images), text_encoder(texts), dim=1)
    return (image_encoder.to(device), text_encoder.to(device), images.to(device), texts.to(device)), want


def call(submission, device, args):
    with torch.no_grad(), running("score_pairs(image_encoder, text_encoder, images, texts)", submission):
        return submission.score_pairs(*args)


def test_scores_are_right(submission, device):
    args, want = setup(device)
    out = expect_tensor(call(submission, device, args), "score_pairs(...)")
    expect_device(out, device, "the scores", "compute them where the inputs are.")
    got = out.cpu()
    if got.shape == want.shape and not torch.allclose(got, want, atol=1e-4, rtol=1e-4):
        fail("score_pairs(...) returned wrong scores: the cosine, on the current stream, read the image "
             "embeddings before the side stream had written them. Work queued on two streams runs in no fixed "
             "order: make the current stream wait for the side stream (wait_stream, or an event the side stream "
             "records and the current stream waits for) before it reads what the side stream wrote.")
    expect_close(got, want, "score_pairs(...)", atol=1e-4, rtol=1e-4)


def test_python_does_not_wait_for_the_device(submission, device):
    args, _ = setup(device)
    with measure(device) as m:
        call(submission, device, args)
    if m.waits:
        fail(f"score_pairs(...) made {m.describe_waits()}: Python waited for {device}, and the function is meant only "
             "to queue work. Order the streams on the device instead: stream.wait_stream(other) or "
             "stream.wait_event(event) make a stream wait without stopping Python.")


def test_the_encoders_run_on_two_streams(submission, device):
    args, _ = setup(device)
    current = torch.accelerator.current_stream(device)
    call(submission, device, args)
    ran_on = args[0].streams
    if not ran_on:
        fail("score_pairs(...) never ran the image encoder.")
    if any(s == current for s in ran_on):
        fail("the image encoder ran on the current stream: the scores are right, but the two encoders no longer "
             "overlap, which is what the second stream is for. Keep the image encoder on its own stream and make "
             "the current stream wait for it before the cosine.")
