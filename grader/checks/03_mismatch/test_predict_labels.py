"""Grader for predict_labels: the batch is moved to the model's device (which may be the second device while the
current one is the first), the model stays where it is, the predictions are right and come back on the CPU.

A forward pre-hook on the grader's model records the device of its input, so computing elsewhere (moving the
model to the CPU, or the batch to another device) is seen on every machine."""

import torch
from torch import nn

from grader.expect import canonical, expect_device, expect_tensor, fail, running

EXPLAIN = ("the batch is on another device than the model ({device}): move the inputs to the model's device, "
           "taken from the model itself: images.to(next(model.parameters()).device).")


def setup(device):
    features, classes = int(torch.randint(4, 10, ())), int(torch.randint(3, 7, ()))
    cpu_model = nn.Sequential(nn.Linear(features, 16), nn.ReLU(), nn.Linear(16, classes))
    images = torch.randn(64, features)
    with torch.no_grad():
        top2 = cpu_model(images).topk(2, dim=1).values
    # Clear winners only, so that rounding on another device cannot change an argmax.
    images = images[(top2[:, 0] - top2[:, 1]) > 1e-2][: int(torch.randint(5, 17, ()))]
    with torch.no_grad():
        expected = cpu_model(images).argmax(dim=1)
    model = nn.Sequential(nn.Linear(features, 16), nn.ReLU(), nn.Linear(16, classes))
    model.load_state_dict(cpu_model.state_dict())
    model.to(device)
    seen = []
    model.register_forward_pre_hook(
        lambda module, args: seen.append(args[0].device if args and isinstance(args[0], torch.Tensor) else None))
    return model, images, expected, seen


def run(submission, model, images, device):
    with running(f"predict(model, images) with the model on {device} and the images on cpu", submission,
                 explain_device_error=EXPLAIN.format(device=device)):
        return submission.predict(model, images)


def test_predictions_are_right_and_on_the_cpu(submission, device):
    model, images, expected, _ = setup(device)
    out = expect_tensor(run(submission, model, images, device), "the value returned by predict")
    expect_device(out, "cpu", "the predictions returned by predict",
                  "return them on the CPU for the report (.cpu() at the end).")
    if out.dtype != torch.int64 or tuple(out.shape) != tuple(expected.shape):
        fail(f"predict should return int64 class indices of shape {tuple(expected.shape)}, got {out.dtype} "
             f"{tuple(out.shape)}.")
    if not torch.equal(out, expected):
        fail(f"predict returned wrong classes for {int((out != expected).sum())} of {len(expected)} rows: "
             "keep the model and the argmax over the classes as they were.")


def test_the_batch_goes_to_the_model(submission, device):
    model, images, _, seen = setup(device)
    run(submission, model, images, device)
    moved = sorted({str(p.device) for p in model.parameters() if canonical(p.device) != canonical(device)})
    if moved:
        fail(f"predict moved the model from {device} to {', '.join(moved)}: leave the model where it is and "
             "move the batch to it.")
    wrong = sorted({str(d) for d in seen if d is None or canonical(d) != canonical(device)})
    if not seen or wrong:
        fail(f"the model on {device} was given its input on {', '.join(wrong) or 'nothing'}: "
             f"{EXPLAIN.format(device=device)}")
