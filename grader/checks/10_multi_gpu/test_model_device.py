"""Grader for model_device: a device taken from a tensor must keep its index.

torch.device("cuda") (or "sim") without an index means the current device, so dropping the index sends
work for a model on the second GPU to the first. Checked on every leg: model_device returns the model's
device with its index (on a one-GPU machine 'cuda' happens to work, so the index itself is checked, which
makes the bug visible on every accelerator leg); predict puts its result on the model's device with the
reference values, the model on the leg's device (sim:1 / cuda:1 while the current device stays the first).
With a pair of devices, a model on the second device is served while the first is current, and the batch
is copied once, host to that device, with no round trip. Forward passes only."""

import copy
import random

import torch
from torch import nn

from grader.engine.expect import expect_close, expect_device, fail, measure, running

FIX = ("a device without its index means the current device: keep the index, use "
       "next(model.parameters()).device itself.")
# A device with an index, but another one: the index was fixed in the code or taken from the current device.
WRONG_INDEX = ("the index is not the model's: a fixed index (cuda:0) or the current device's names one GPU for "
               "every model. Read the device from the model itself, next(model.parameters()).device.")
# For predict, whose result says where the batch went but not how the device was named.
SEND = ("send the batch to the model's own device, next(model.parameters()).device, index included: a device "
        "without its index means the current device, and a fixed index or the current device's names the same GPU "
        "for every model.")


def make(device):
    features, classes = random.randint(4, 10), random.randint(3, 6)
    model = nn.Sequential(nn.Linear(features, 16), nn.Tanh(), nn.Linear(16, classes))
    batch = torch.randn(random.randint(5, 12), features)
    with torch.no_grad():
        expected = model(batch).argmax(dim=1)
    return model.to(device), batch, expected


def test_model_device_keeps_the_index(submission, device):
    model, _, _ = make(device)
    with running("model_device(model)", submission):
        got = submission.model_device(model)
    try:
        got = torch.device(got)
    except Exception:
        fail(f"model_device should return a torch.device, got {got!r}.")
    if device.type != "cpu" and got.index is None:
        fail(f"model_device(model) returned {got!r} for a model on {device}: {FIX} "
             f"('{got.type}' works on one GPU only because it means {got.type}:0 there).")
    if got != device:
        fail(f"model_device(model) returned {got} for a model on {device}: "
             + (WRONG_INDEX if got.index is not None else FIX))


def serve(submission, model, batch, expected, device, what):
    with running(what, submission, explain_device_error=f"the batch was sent to another device than the model's: {SEND}"):
        out = submission.predict(model, batch)
    expect_device(out, device, "predict's result", SEND)
    if out.dtype != torch.int64:
        fail(f"predict returned {str(out.dtype).removeprefix('torch.')} class ids; argmax gives int64, keep it.")
    expect_close(out.cpu(), expected, "predict(model, batch)")


def test_predict_on_the_models_device(submission, device):
    model, batch, expected = make(device)
    serve(submission, model, batch, expected, device, f"predict(model, batch) with the model on {device}")


def test_model_on_the_second_device(submission, devices):
    first, second = devices
    model, batch, expected = make(second)
    with measure(second) as m:
        serve(submission, model, batch, expected, second,
              f"predict(model, batch) with the model on {second} while {first} is the current device")
    if m.d2d or len(m.h2d) != 1:
        fail(f"predict made {len(m.h2d)} copies from the host and {len(m.d2d)} between devices: copy the batch "
             f"once, straight to {second}.")
