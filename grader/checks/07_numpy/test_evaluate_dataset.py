"""Grader for evaluate_dataset, the capstone of "Feeding the device": the CPU's numbers in the promised types,
pinned non_blocking copies that do not block, and two waits for the device in all.

One evaluation per leg (a fresh draw; the checks below read it), with a model that has dropout, so that an
evaluation left in training mode gives other numbers, and more batches than any reading period a learner
might pick."""

import copy
import random
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.utils.data import Dataset

from grader.engine.expect import GradeFailure, expect_close, fail, measure, once_per_leg, running, within

BATCH = 64


class Items(Dataset):
    """Dict items, as many datasets give them."""

    def __init__(self, features, labels):
        self.features, self.labels = features, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"features": self.features[i], "label": int(self.labels[i])}


def draw(device):
    batches = random.randint(10, 16)
    n = BATCH * (batches - 1) + random.randint(16, BATCH - 1)  # a short last batch, never a tiny one
    f, c = random.randint(6, 12), random.randint(3, 6)
    model = nn.Sequential(nn.Linear(f, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, c))
    features, labels = torch.randn(n, f), torch.randint(0, c, (n,))
    hits = torch.rand(n) < 0.5  # about half the answers right, so that a miscount shows
    reference_model = copy.deepcopy(model).eval()
    with torch.no_grad():
        logits = reference_model(features)
    labels = torch.where(hits, logits.argmax(1), labels)
    probabilities = logits.softmax(1)
    accuracy = (probabilities.argmax(1) == labels).double().mean().item()
    model.train()  # as a training loop leaves it
    return Items(features, labels), model.to(device), accuracy, probabilities


@dataclass
class Evaluated:
    dataset: Items
    accuracy: float
    probabilities: torch.Tensor
    result: object
    m: object


@once_per_leg
def evaluated(submission, device) -> Evaluated:
    dataset, model, accuracy, probabilities = draw(device)
    try:
        with measure(device) as m, running(f"evaluate(model, dataset of {len(dataset)}, {str(device)!r})",
                                           submission):
            result = submission.evaluate(model, dataset, device)
    except GradeFailure as exc:
        text = str(exc)
        if "numpy" in text.lower():
            text += ("\n.numpy() reads CPU memory only: a tensor on the device must come back first "
                     "(.cpu()), once, for all the batches together.")
        raise GradeFailure(text) from None
    return Evaluated(dataset, accuracy, probabilities, result, m)


def test_gives_the_numbers_of_the_cpu(submission, device):
    t = evaluated(submission, device)
    if not isinstance(t.result, (tuple, list)) or len(t.result) != 2:
        fail(f"evaluate should return a pair (accuracy, probabilities); got {type(t.result).__name__}.")
    accuracy, probabilities = t.result
    if not isinstance(accuracy, float):
        fail(f"the accuracy should be a Python float, got {type(accuracy).__name__}: read the count with .item() "
             "once, at the end.")
    if not isinstance(probabilities, np.ndarray) or probabilities.dtype != np.float32:
        fail(f"the probabilities should be a NumPy float32 array, got {type(probabilities).__name__}"
             f"{' of ' + str(probabilities.dtype) if hasattr(probabilities, 'dtype') else ''}.")
    n, c = t.probabilities.shape
    if probabilities.shape != (n, c):
        fail(f"the probabilities should have shape ({n}, {c}), one row per item; got {probabilities.shape}.")
    eval_mode = "Is the model in eval mode (its dropout off) and are the batches in the dataset's order?"
    expect_close(torch.from_numpy(np.array(probabilities)), t.probabilities, f"the probabilities. {eval_mode}",
                 atol=1e-5, rtol=1e-4)
    if not within(accuracy, t.accuracy, 1e-6):  # float32 means are this close; one miscount is 1e-3 off
        fail(f"the accuracy is {accuracy:.6g}, the data give {t.accuracy:.6g}: the fraction of all {n} items "
             "whose most probable class is the label.")


def test_copies_to_the_device_do_not_block(submission, device):
    t = evaluated(submission, device)
    smallest = min(len(t.dataset) % BATCH or BATCH, BATCH) * 8  # the smallest batch of labels, in bytes
    blocking = [c for c in t.m.h2d if c.blocking and c.nbytes >= smallest]
    if blocking:
        fail(f"evaluate made {len(blocking)} copies of batches to {device} that made Python wait (of "
             f"{len(t.m.h2d)}): non_blocking=True is asynchronous only from pinned memory. Let the loader pin "
             "the batches bound for an accelerator: DataLoader(..., pin_memory=True), and not for the CPU.")


def test_python_waits_twice(submission, device):
    t = evaluated(submission, device)
    if t.m.waits > 2:
        fail(f"evaluate made {t.m.describe_waits()} over {-(-len(t.dataset) // BATCH)} batches: each makes Python "
             f"wait for {device}. Keep the count and the probabilities on the device, and bring each back once, "
             "at the end.")
