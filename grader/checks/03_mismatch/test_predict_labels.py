"""Grader for predict_labels: the batch is moved to the model's device (which may be the second device while the
current one is the first), the model stays where it is, the predictions are right and come back on the CPU.

A forward pre-hook on the grader's model records the device of its input, so computing elsewhere (moving the
model to the CPU, or the batch to another device) is seen on every machine. The model has dropout and batch norm
and comes in training mode, as a training loop leaves it; the hook records the mode too, so predictions made
without `model.eval()` are seen on every draw."""

import torch
from torch import nn

from grader.engine.expect import canonical, expect_device, expect_tensor, fail, running

EXPLAIN = ("the batch is on another device than the model ({device}): move the inputs to the model's device, "
           "taken from the model itself: images.to(next(model.parameters()).device).")


def make_model(features: int, classes: int) -> nn.Module:
    """Dropout and batch norm, so that predictions in training mode differ from evaluation's."""
    model = nn.Sequential(nn.Linear(features, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5),
                          nn.Linear(16, classes))
    with torch.no_grad():  # running statistics far from a batch's own, as after training
        model[1].running_mean.uniform_(-1, 1)
        model[1].running_var.uniform_(0.25, 4)
    return model


def setup(device):
    features, classes = int(torch.randint(4, 10, ())), int(torch.randint(3, 7, ()))
    cpu_model = make_model(features, classes).eval()
    images = torch.randn(64, features)
    with torch.no_grad():
        top2 = cpu_model(images).topk(2, dim=1).values
    # Clear winners only, so that rounding on another device cannot change an argmax.
    images = images[(top2[:, 0] - top2[:, 1]) > 1e-2][: int(torch.randint(5, 17, ()))]
    with torch.no_grad():
        expected = cpu_model(images).argmax(dim=1)
    model = make_model(features, classes)
    model.load_state_dict(cpu_model.state_dict())
    model.to(device)
    seen, modes, homes = [], [], []

    def record(module, args):
        seen.append(args[0].device if args and isinstance(args[0], torch.Tensor) else None)
        modes.append(module.training)
        homes.append(next(module.parameters()).device)  # a model moved away and back is seen here

    model.register_forward_pre_hook(record)
    return model, images, expected, seen, modes, homes


def run(submission, model, images, device):
    with running(f"predict(model, images) with the model on {device} and the images on cpu", submission,
                 explain_device_error=EXPLAIN.format(device=device)):
        return submission.predict(model, images)


def test_predictions_are_right_and_on_the_cpu(submission, device):
    model, images, expected, _, modes, _ = setup(device)
    out = expect_tensor(run(submission, model, images, device), "the value returned by predict")
    if any(modes):
        fail("the model ran in training mode: its dropout and batch norm then give other predictions than in "
             "evaluation (and different ones on every run). Keep model.eval() before the forward pass.")
    expect_device(out, "cpu", "the predictions returned by predict",
                  "return them on the CPU for the report (.cpu() at the end).")
    if out.dtype != torch.int64 or tuple(out.shape) != tuple(expected.shape):
        fail(f"predict should return int64 class indices of shape {tuple(expected.shape)}, got {out.dtype} "
             f"{tuple(out.shape)}.")
    returned = out.clone()  # what a caller reading the result at once sees
    if device.type != "cpu":
        torch.accelerator.synchronize(device)
    if not torch.equal(returned, expected) and torch.equal(out, expected):
        fail(f"predict returned its labels before they had arrived: they were wrong when read at once ("
             f"{int((returned != expected).sum())} of {len(expected)} rows) and right only after waiting for "
             f"{device}. A copy to the CPU with non_blocking=True returns before the device has run it; copy "
             "the labels you return without non_blocking (.cpu()), or wait for the copy before returning.")
    if not torch.equal(out, expected):
        fail(f"predict returned wrong classes for {int((out != expected).sum())} of {len(expected)} rows: "
             "keep the model and the argmax over the classes as they were.")


def test_the_batch_goes_to_the_model(submission, device):
    model, images, _, seen, _, homes = setup(device)
    run(submission, model, images, device)
    moved = sorted({str(d) for d in [*homes, *(p.device for p in model.parameters())]
                    if canonical(d) != canonical(device)})
    if moved:  # first: a model moved to the CPU (and back) also sees CPU inputs, and the cause is the move
        fail(f"predict moved the model from {device} to {', '.join(moved)}: leave the model where it is and "
             "move the batch to it.")
    wrong = sorted({str(d) for d in seen if d is None or canonical(d) != canonical(device)})
    if not seen or wrong:
        fail(f"the model on {device} was given its input on {', '.join(wrong) or 'nothing'}: "
             f"{EXPLAIN.format(device=device)}")
