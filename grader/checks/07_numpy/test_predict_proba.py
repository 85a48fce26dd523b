"""Grader for predict_proba: probabilities come back to NumPy as `.detach().cpu().numpy()`, in one copy.

Checked on every leg: the result is a float32 NumPy array equal to a reference computed here on the CPU,
the call makes exactly one copy from the device to the CPU (the (B, C) probabilities: `measure` counts the
copies alike on every leg, none on the CPU) and no reads of single values, and the caller's model and batch
stay on their device. Moving the model to the CPU, converting row by row or in chunks (the batch has hundreds
of rows, more than any chunk) all fail; so does a copy made with non_blocking=True that nothing waits for
before NumPy reads it (its values may not have arrived: on the simulator they never have, on a GPU they may
not have), on every accelerator leg alike."""

import copy
import random

import numpy as np
import torch
from torch import nn

from grader.engine.expect import GradeFailure, expect_close, fail, measure, refuse_unawaited_reads, running

FIX = ("NumPy only reads host memory and cannot record gradients: bring the probabilities back with "
       "probs.detach().cpu().numpy().")


def make(device):
    features, hidden, classes = random.randint(5, 12), random.randint(8, 24), random.randint(3, 7)
    model = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes))
    x = torch.randn(random.randint(300, 500), features)  # more rows than any chunk a loop might copy
    with torch.no_grad():
        expected = torch.softmax(model(x), dim=1)
    return model.to(device), x.to(device), expected


def call(submission, model, x, device):
    try:
        with running(f"predict_proba(model, x) with both on {device}", submission, explain_device_error=FIX):
            return submission.predict_proba(model, x)
    except GradeFailure as exc:
        if "requires grad" in str(exc) and FIX not in str(exc):
            raise GradeFailure(f"{exc}\n{FIX}") from None
        raise


EARLY_READ = ("predict_proba copied the probabilities to the CPU with non_blocking=True and handed them to NumPy "
              "without waiting for the copy: the array may be read before its values have arrived (on a GPU "
              "sometimes, on the simulated device always). A copy to the host needs no non_blocking here: "
              "probs.detach().cpu().numpy() returns once the values are there.")


def test_returns_the_probabilities_as_a_numpy_array(submission, device):
    model, x, expected = make(device)
    with measure(device) as m:
        out = call(submission, model, x, device)
    refuse_unawaited_reads(m, "predict_proba", EARLY_READ)
    if isinstance(out, torch.Tensor):
        fail(f"predict_proba returned a tensor on {out.device}, not a NumPy array: {FIX}")
    if not isinstance(out, np.ndarray):
        fail(f"predict_proba should return a NumPy array, but it returned {type(out).__name__}: {FIX}")
    if out.dtype != np.float32:
        fail(f"predict_proba returned a {out.dtype} array; the probabilities are float32, keep them so.")
    expect_close(torch.from_numpy(np.array(out)), expected, "predict_proba(model, x)")


def test_one_copy_back_to_the_host(submission, device):
    model, x, _ = make(device)
    with measure(device) as m:
        call(submission, model, x, device)
    refuse_unawaited_reads(m, "predict_proba", EARLY_READ)
    if m.host_reads:
        fail(f"predict_proba made {m.describe_round_trips()}: each value read by Python makes it wait for "
             f"{device}. Copy the whole probability block at once: {FIX}")
    if len(m.d2h) > 1:
        fail(f"predict_proba made {m.describe_round_trips()}; one copy of the (B, C) probabilities is enough. "
             "Compute on the model's device, then copy the result once (do not move the model or the "
             f"batch, and do not copy row by row or chunk by chunk): {FIX}")


def test_model_and_batch_stay_on_their_device(submission, device):
    model, x, _ = make(device)
    snapshot = copy.deepcopy(model)
    call(submission, model, x, device)
    for name, p in model.named_parameters():
        if p.device != device:
            fail(f"after predict_proba the model's {name} is on {p.device}, not {device}: the evaluation moved "
                 "the caller's model. Leave the model where it is and copy only the result.")
    for (name, p), q in zip(model.named_parameters(), snapshot.parameters()):
        if not torch.equal(p.detach().cpu(), q.detach().cpu()):
            fail(f"predict_proba changed the model's {name}; evaluation must not modify the model.")
    if x.device != device:
        fail(f"x is on {x.device} after the call, not {device}.")
