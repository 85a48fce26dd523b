"""Grader for inference_service, the capstone of "Beyond one device": a checkpoint saved on another device loads
without touching that device, the service runs its model on the device given with its inputs there, answers as
the CPU does, records no autograd graph, and Python waits for the device per batch, never per text.

One service per leg (a fresh draw; the checks below read it). On an accelerator with two devices the
checkpoint is saved on the other one (a GPU of the machine that is not this service's), elsewhere on the leg's
own device. The requests are several times more than a batch."""

import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from grader.engine.expect import GradeFailure, canonical, fail, measure, once_per_leg, running, within

PAD, UNKNOWN = 0, 1
FIX_LOAD = ("torch.load(path, map_location=\"cpu\", weights_only=True) (or map_location=device) restores the "
            "checkpoint where this machine wants it; load_state_dict then copies it where the model is.")


class TextClassifier(nn.Module):
    """The exercise's model, written again: the reference the service is compared with."""

    def __init__(self, vocab_size, dim, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        mask = (ids != PAD).unsqueeze(-1)
        mean = (self.embed(ids) * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
        return self.head(self.dropout(mean))


def saving_device(device: torch.device) -> torch.device:
    """The device the checkpoint was saved from: another device of the same kind where there is one."""
    if device.type == "cpu":
        return device
    count = torch.get_device_module(device).device_count()
    return torch.device(device.type, ((device.index or 0) + 1) % count) if count > 1 else device


def draw():
    words = [f"w{i}" for i in random.sample(range(1000), random.randint(30, 60))]
    labels = [f"class_{c}" for c in random.sample("abcdefgh", random.randint(3, 5))]
    dim = random.randint(8, 16)
    model = TextClassifier(len(words) + 2, dim, len(labels))
    with torch.no_grad():
        model.head.weight.mul_(4.0)  # answers far from uniform: a wrong probability shows
    checkpoint = {"model": model.state_dict(), "vocab": ["<pad>", "<unk>"] + words, "labels": labels, "dim": dim}
    unknown = ["qq", "zz", "xx"]

    def text():
        chosen = [random.choice(words if random.random() < 0.85 else unknown) for _ in range(random.randint(1, 12))]
        return " ".join(w.upper() if random.random() < 0.1 else w for w in chosen)

    texts = [text() for _ in range(random.randint(150, 220))]
    return checkpoint, texts, random.randint(16, 32)


def reference(checkpoint, texts, batch_size):
    model = TextClassifier(len(checkpoint["vocab"]), checkpoint["dim"], len(checkpoint["labels"]))
    model.load_state_dict(checkpoint["model"])
    model.eval()
    index = {w: i for i, w in enumerate(checkpoint["vocab"])}
    answers = []
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            rows = [[index.get(w, UNKNOWN) for w in t.lower().split()] for t in texts[start:start + batch_size]]
            longest = max(map(len, rows))
            p = model(torch.tensor([r + [PAD] * (longest - len(r)) for r in rows])).softmax(-1)
            answers += [(row.argmax().item(), row) for row in p]
    return answers


@dataclass
class Forward:
    device: torch.device | None
    records_graph: bool  # autograd on, and the model has parameters that require gradients
    training: bool


@dataclass
class Served:
    checkpoint: dict
    texts: list
    batch_size: int
    saved_on: torch.device
    put_on_saving_device: int  # peak bytes allocated on saved_on while the service loaded and served
    predictor: object
    answers: object
    forwards: list = field(default_factory=list)
    m: object = None  # what predict() did (grader.engine.instruments.Measurement)


@once_per_leg
def served(submission, device) -> Served:
    checkpoint, texts, batch_size = draw()
    saved_on = saving_device(device)
    forwards = []

    def hook(module, args):
        if type(module).__name__ == "TextClassifier":
            x = args[0] if args and isinstance(args[0], torch.Tensor) else None
            forwards.append(Forward(None if x is None else x.device,
                                    torch.is_grad_enabled() and any(p.requires_grad for p in module.parameters()),
                                    module.training))

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "classifier.pt"
        torch.save({**checkpoint, "model": {k: v.to(saved_on) for k, v in checkpoint["model"].items()}}, path)
        mod = torch.get_device_module(saved_on) if saved_on != device else None
        if mod is not None:
            mod.reset_peak_memory_stats(saved_on)
            before = mod.memory_allocated(saved_on)
        handle = nn.modules.module.register_module_forward_pre_hook(hook)
        try:
            with running(f"Predictor(path, {str(device)!r}, batch_size={batch_size}) of a checkpoint saved on "
                         f"{saved_on}", submission):
                predictor = submission.Predictor(str(path), device, batch_size=batch_size)
            with measure(device) as m, running(f"predictor.predict(texts) of {len(texts)} texts", submission):
                answers = predictor.predict(texts)
        except GradeFailure as exc:
            text = str(exc)
            if "same device" in text or "to be on" in text:
                text += (f"\nThe model serves on {device}; every tensor it meets must be there too: a batch tokenised "
                         "into a CPU tensor must be moved (or made with device=) before the model sees it.")
            raise GradeFailure(text) from None
        finally:
            handle.remove()
        extra = mod.max_memory_allocated(saved_on) - before if mod is not None else 0
    return Served(checkpoint, texts, batch_size, saved_on, extra, predictor, answers, forwards, m)


def test_loads_nothing_onto_the_device_that_saved_it(submission, device):
    s = served(submission, device)
    if s.put_on_saving_device > 0:
        fail(f"the service put {s.put_on_saving_device} bytes on {s.saved_on}, the device that saved the checkpoint, "
             f"while it serves on {device}: torch.load restores every tensor to the device it was saved from, which "
             f"on another machine may not exist. {FIX_LOAD}")


def test_serves_on_the_device_it_is_given(submission, device):
    s = served(submission, device)
    model = getattr(s.predictor, "model", None)
    if not isinstance(model, nn.Module):
        fail(f"Predictor should keep its model as self.model; got {type(model).__name__}.")
    where = sorted({str(v.device) for v in model.state_dict().values()})
    if [canonical(w) for w in where] != [canonical(device)]:
        fail(f"the service's model has tensors on {', '.join(where)}; it should serve on {device}.")
    elsewhere = sorted({str(f.device) for f in s.forwards if f.device is None or canonical(f.device) != canonical(device)})
    if not s.forwards or elsewhere:
        fail(f"predict ran the model on {', '.join(elsewhere) or 'nothing'}: every batch must run on {device}.")


def test_answers_as_the_cpu_does(submission, device):
    s = served(submission, device)
    want = reference(s.checkpoint, s.texts, s.batch_size)
    got = s.answers
    if not isinstance(got, list) or len(got) != len(want):
        fail(f"predict should return a list of one (label, probability) pair per text ({len(want)}); got "
             f"{type(got).__name__}{f' of {len(got)}' if isinstance(got, list) else ''}.")
    labels = s.checkpoint["labels"]
    for i, (answer, (best, probabilities)) in enumerate(zip(got, want)):
        if not isinstance(answer, (tuple, list)) or len(answer) != 2:
            fail(f"answer {i} is {answer!r:.80}; each answer is a pair (label, probability).")
        label, p = answer
        if not isinstance(label, str) or not isinstance(p, float):
            fail(f"answer {i} is ({type(label).__name__}, {type(p).__name__}); it should be (str, float): the "
                 "class's name and its probability as a Python float.")
        right = within(p, probabilities[best].item(), 1e-5) and (
            label == labels[best] or (label in labels and within(probabilities[labels.index(label)].item(),
                                                                 probabilities[best].item(), 1e-5)))
        if not right:
            if any(f.training for f in s.forwards):
                fail("the model ran in training mode (its dropout drops features at random): call model.eval().")
            fail(f"for {s.texts[i]!r} predict answered ({label!r}, {p:.5g}); the checkpoint's model answers "
                 f"({labels[best]!r}, {probabilities[best].item():.5g}).")


def test_records_no_autograd_graph(submission, device):
    s = served(submission, device)
    graphs = sum(f.records_graph for f in s.forwards)
    if graphs:
        fail(f"{graphs} of the {len(s.forwards)} forward passes of predict ran with autograd on: each records a "
             "graph (and keeps every activation it needs) that no backward will ever use. Serve under "
             "torch.inference_mode() (or torch.no_grad()).")


def test_python_waits_per_batch_not_per_text(submission, device):
    s = served(submission, device)
    if device.type == "cpu":
        return  # nothing to wait for
    batches = -(-len(s.texts) // s.batch_size)
    if s.m.waits > 3 * batches:
        fail(f"predict made {s.m.describe_waits()} for {len(s.texts)} texts in {batches} batches: each makes "
             f"Python wait for {device}. Bring each batch's answers back at once (.tolist() or .cpu() of the "
             "whole batch), not one text at a time.")
