"""Grader for gpu_in_workers: a Dataset used by DataLoader workers must make CPU tensors, and the training
step must move each batch to the device.

What CUDA and the simulator share is checked: where __getitem__ puts its tensors (called here, in the main
process), and that a forked two-worker loader over the dataset delivers correct CPU batches. (A device tensor
made in a forked worker fails on both, but differently: CUDA raises 'Cannot re-initialize CUDA in forked
subprocess', the simulator's worker crashes; no verdict depends on which.)"""

import copy
import random
import re

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, SequentialSampler

from grader.engine.expect import GradeFailure, expect_close, expect_device, fail, running

CPU_ONLY = ("DataLoader workers must return CPU tensors: __getitem__ runs in forked worker processes, where "
            "CUDA cannot be used ('Cannot re-initialize CUDA in forked subprocess'). Make CPU tensors in the "
            "Dataset and move each batch to the device in train_step.")
SPAWNED = ("Your make_loader starts its workers with multiprocessing_context={context!r}, which lets them use the "
           "GPU, but each worker then starts a Python and a CUDA context of its own (seconds, and hundreds of MB "
           "of GPU memory, per worker) to do work the main process does better: the workers are for CPU work, and "
           "a Dataset that makes device tensors fails with the default, forked, workers.")


def spawned(loader) -> str:
    """A sentence about the learner's start method when it is not fork (their Dataset may then seem to work)."""
    context = getattr(loader, "multiprocessing_context", None)
    name = context if isinstance(context, str) else getattr(context, "_name", None)
    return "\n" + SPAWNED.format(context=name) if name and name != "fork" else ""


def from_a_worker(message: str, filename: str) -> str:
    """A failure inside a DataLoader worker, said in a few lines: torch re-raises it with the worker's whole
    traceback in its text (torch's and the grader's frames included). Keep the learner's lines and the error."""
    if "Original Traceback" not in message:
        return message
    head, _, trace = message.partition("Original Traceback (most recent call last):")
    lines = trace.splitlines()
    frames = []
    for i, line in enumerate(lines):
        found = re.search(r'File "(.*)", line (\d+), in (\S+)', line)
        if found and found.group(1) == filename:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            frames.append(f"line {found.group(2)}, in {found.group(3)}: `{code}`")
    errors = [line for line in lines if line.strip() and not line.startswith((" ", "\t"))]
    error = errors[-1].strip() if errors else head.strip()
    call = head.split(" raised ")[0].strip()
    where = f" ({'; '.join(frames)})" if frames else ""
    return f"{call}: a worker process raised {error}{where}"


def data():
    n, h, w = random.randint(20, 40), random.randint(3, 6), random.randint(3, 6)
    return torch.rand(n, h, w) * 5 + 2, torch.randint(0, 4, (n,))


def standardized(image):
    return (image - image.mean()) / (image.std() + 1e-6)


def loader_for(submission, device, images, labels):
    with running(f"make_loader(images, labels, {str(device)!r})", submission):
        return submission.make_loader(images, labels, device)


def tensors_of(item):
    return [t for t in (item if isinstance(item, (tuple, list)) else [item]) if isinstance(t, torch.Tensor)]


def test_dataset_makes_cpu_tensors(submission, device):
    images, labels = data()
    loader = loader_for(submission, device, images, labels)
    dataset = getattr(loader, "dataset", None)
    if dataset is None:
        fail("make_loader should return a torch.utils.data.DataLoader.")
    i = random.randrange(len(images))
    with running(f"loader.dataset[{i}]", submission):
        item = dataset[i]
    for t in tensors_of(item):
        if t.device.type != "cpu":
            fail(f"loader.dataset[{i}] returned a tensor on {t.device}. {CPU_ONLY}{spawned(loader)}")
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        fail(f"loader.dataset[{i}] should be an (image, label) pair.")
    expect_close(item[0], standardized(images[i]), f"the standardised image loader.dataset[{i}][0]")
    if int(item[1]) != int(labels[i]):
        fail(f"loader.dataset[{i}] has label {int(item[1])}, expected {int(labels[i])}.")
    if isinstance(item[1], torch.Tensor) and item[1].dtype != labels.dtype:
        fail(f"loader.dataset[{i}] gives a {str(item[1].dtype).removeprefix('torch.')} label; class labels stay "
             f"{str(labels.dtype).removeprefix('torch.')}, which cross_entropy needs.")


def test_keeps_worker_processes(submission, device):
    images, labels = data()
    loader = loader_for(submission, device, images, labels)
    if getattr(loader, "num_workers", 0) < 1:
        fail(f"make_loader's DataLoader has num_workers={getattr(loader, 'num_workers', 0)}: keep the worker "
             "processes (they prepare batches while the model trains) and make them do CPU work only.")


def test_keeps_batches_of_16_in_order(submission, device):
    images, labels = data()
    loader = loader_for(submission, device, images, labels)
    if getattr(loader, "batch_size", None) != 16 or not isinstance(getattr(loader, "sampler", None),
                                                                   SequentialSampler):
        fail(f"make_loader's DataLoader has batch_size={getattr(loader, 'batch_size', None)} and a "
             f"{type(getattr(loader, 'sampler', None)).__name__}: the statement asks for batches of 16, in order "
             "(no shuffle). Keep the loader as it was, apart from where its tensors are made.")


def test_workers_deliver_cpu_batches(submission, device):
    images, labels = data()
    loader = loader_for(submission, device, images, labels)
    forked = DataLoader(loader.dataset, batch_size=8, num_workers=2, multiprocessing_context="fork")
    try:
        with running("iterating a DataLoader(dataset, batch_size=8, num_workers=2) with forked workers",
                     submission, explain_device_error=CPU_ONLY):
            batches = [tuple(b) for b in forked]
    except GradeFailure as exc:
        told = from_a_worker(str(exc), submission.filename)
        if told != str(exc) and CPU_ONLY not in told:
            told += f"\n{CPU_ONLY}"
        raise GradeFailure(told + spawned(loader)) from None
    for x, y in batches:
        if x.device.type != "cpu" or y.device.type != "cpu":
            fail(f"a batch from the workers is on {x.device}. {CPU_ONLY}")
    expect_close(torch.cat([x for x, _ in batches]), torch.stack([standardized(im) for im in images]),
                 "the images of an epoch from the workers")


def test_train_step_moves_the_batch(submission, device):
    # Two steps in a row, as in training: a step that leaves out zero_grad adds the first step's gradients to
    # the second's, which one step alone cannot show.
    images, labels = data()
    batches = [(torch.stack([standardized(im) for im in images[i:i + 8]]), labels[i:i + 8]) for i in (0, 8)]
    model = nn.Sequential(nn.Flatten(), nn.Linear(batches[0][0][0].numel(), 4))
    reference = copy.deepcopy(model)
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    for step, (x, y) in enumerate(batches, start=1):
        with running(f"train_step(model, optimizer, (x, y), {str(device)!r}) with x and y from the loader, on the "
                     "CPU", submission, explain_device_error=f"train_step must move the batch (x and y) to {device} "
                     "before the model uses it: the loader's batches are CPU tensors."):
            loss = submission.train_step(model, optimizer, (x, y), device)
        ref_loss = F.cross_entropy(reference(x), y)
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
        after = "train_step" if step == 1 else ("a second train_step (each step must start from zero gradients: "
                                                "optimizer.zero_grad())")
        expect_close(torch.as_tensor(loss).detach().float(), ref_loss.detach(), f"the loss returned by {after}")
        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            expect_device(p, device, f"model parameter {name}", "train_step should leave the model where it is.")
            expect_close(p, q, f"parameter {name} after {after}")
