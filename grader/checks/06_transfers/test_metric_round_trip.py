"""Grader for metric_round_trip: an evaluation loop must keep its metric on the device (no copy to the CPU
and back per batch); checked by counting the copies, host reads and data-sized results (nonzero, boolean masks)
inside evaluate() on every leg, over an evaluation longer than any logging period (a read every 100 batches
shows). A data-sized result makes the host wait on an accelerator only: on the CPU its size is known where it
is computed, so the cpu leg does not count it (as grader.engine.expect.no_round_trips)."""

import copy
import random

import torch
from torch import nn

from grader.engine.expect import expect_device, expect_tensor, fail, measure, running

FIX = ("keep the scores on the device: topk_hits works on tensors of any device, so give it logits and y "
       "where they are and add its result to the total without .cpu() or .item().")


LONG_EVALUATION = (105, 125)  # batches: more than a logging period of 100


def problem(device, count=None):
    """A fresh linear classifier and evaluation set on `device` (one batch of a single row among them), and the
    same on the CPU for the reference."""
    features, classes = random.randint(4, 8), random.randint(6, 10)
    model = nn.Linear(features, classes)
    count = count or random.randint(3, 6)
    sizes = [random.randint(5, 12) if count < 20 else random.randint(2, 4) for _ in range(count)]
    sizes[random.randrange(count)] = 1
    batches = [(torch.randn(n, features), torch.randint(0, classes, (n,))) for n in sizes]
    k = random.randint(1, 4)
    on_device = [(x.to(device), y.to(device)) for x, y in batches]
    return copy.deepcopy(model), batches, model.to(device), on_device, k


def reference(model_cpu, batches, k) -> int:
    with torch.no_grad():
        return sum(int((model_cpu(x).topk(k, dim=1).indices == y[:, None]).any(dim=1).sum()) for x, y in batches)


def evaluate(submission, device, model, batches, k):
    what = f"evaluate(model, batches, k={k}) with {len(batches)} batches on {device}"
    with running(what, submission,
                 explain_device_error=f"A tensor of the loop was left on another device. To fix it, {FIX}"):
        return submission.evaluate(model, batches, k)


def test_counts_the_topk_hits(submission, device):
    # Several problems: on random labels a wrong metric (the k lowest scores) gets the right count by chance
    # about one time in ten, which made a leg pass now and then.
    for _ in range(4):
        model, batches, model_d, batches_d, k = problem(device)
        expected = reference(model, batches, k)
        out = expect_tensor(evaluate(submission, device, model_d, batches_d, k), "the value returned by evaluate")
        if out.shape != () or out.dtype != torch.int64:
            dtype = str(out.dtype).removeprefix("torch.")
            fail(f"evaluate should return the count as an int64 tensor of shape (), but returned a"
                 f"{'n' if dtype[0] in 'aeiou' else ''} {dtype} tensor of shape {tuple(out.shape)}.")
        got = out.detach().cpu().reshape(()).item()
        if got != expected:
            fail(f"evaluate counted {got:g} top-{k} hits over {sum(len(y) for _, y in batches)} examples; the "
                 f"right count is {expected}: the fix changed the result.")


def test_total_stays_on_the_device(submission, device):
    model, batches, model_d, batches_d, k = problem(device)
    out = evaluate(submission, device, model_d, batches_d, k)
    expect_device(out, device, "the total returned by evaluate",
                  "leave it where the batches are; the caller reads it when it needs the number.")


def test_no_round_trip_per_batch(submission, device):
    model, batches, model_d, batches_d, k = problem(device, count=random.randint(*LONG_EVALUATION))
    with measure(device) as m:
        evaluate(submission, device, model_d, batches_d, k)
    data_sized = m.data_dependent if device.type != "cpu" else []
    if m.waits or data_sized:
        did = [f"made {m.describe_waits()}"] if m.waits else []
        if data_sized:  # nonzero() or a boolean mask sizes its result by the data: the host reads the size
            did.append(f"ran {m.describe_data_dependent()} on {device}, each sizing its result by the data, which "
                       "the host must read")
        cost = (f"each one makes Python wait until {device} has finished all the work queued before it"
                if device.type != "cpu" else "on an accelerator, each one makes Python wait until the device has "
                "finished all the work queued before it")
        fail(f"evaluate over {len(batches)} batches {' and '.join(did)}, while the evaluation needs none: {cost}. "
             f"To fix it, {FIX}")

