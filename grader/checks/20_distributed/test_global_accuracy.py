"""Grader for global_accuracy: a collective of an NCCL group takes device tensors only.

A job of two workers, played one after the other in this process on a pair of devices (sim:0 and sim:1; cuda:0
and cuda:1 on a two-GPU machine) by grader.simulated.collectives, whose group refuses a CPU tensor in NCCL's
words and combines each worker's all-reduce with what the other worker sent. Shards of different sizes (so that
averaging the two accuracies is not the answer), fresh each run; both workers must return the accuracy over both
shards, as a Python float."""

import random

import torch

from grader.engine.expect import expect_close, fail, running
from grader.simulated.collectives import Job, play

FIX = ("a group made for NCCL (init_process_group('nccl')) reduces GPU tensors only: make the counts on the "
       "shard's device (device=labels.device, or .to(labels.device)) before dist.all_reduce, and read the reduced "
       "tensor itself.")


def shard(device, n, classes, share):
    labels = torch.randint(classes, (n,))
    logits = torch.randn(n, classes)
    hits = torch.rand(n) < share  # about this share of right answers, never all, never none
    hits[0], hits[1] = True, False
    logits[hits, labels[hits]] += 10.0
    logits[~hits, labels[~hits]] -= 10.0
    return logits.to(device), labels.to(device), int(hits.sum())


def explain(exc) -> str:
    if "No backend type associated with device type cpu" in str(exc):
        return f"dist.all_reduce was given a CPU tensor: {FIX}"
    if "Duplicate GPU detected" in str(exc):
        return "both workers used one GPU: keep the counts on the device of this worker's shard (labels.device)."
    return ""


def test_every_worker_gets_the_accuracy_of_all_shards(submission, devices):
    classes = random.randint(3, 7)
    sizes = random.sample(range(40, 200), 2)
    # Accuracies far apart and shards of different sizes: a worker's own accuracy and the mean of the two are
    # never the answer, on any draw.
    shares = random.sample([random.uniform(0.15, 0.4), random.uniform(0.6, 0.85)], 2)
    shards = [shard(devices[r], sizes[r], classes, shares[r]) for r in range(2)]
    want = (shards[0][2] + shards[1][2]) / sum(sizes)

    def worker(rank):
        logits, labels, _ = shards[rank]
        with running(f"global_accuracy(logits, labels) in the worker of rank {rank} (on {devices[rank]})",
                     submission, explain_device_error=explain):
            try:
                return submission.global_accuracy(logits, labels)
            except Exception as exc:  # the refusal of a CPU tensor is a device error to explain, not a crash
                if "No backend type associated" in str(exc) or "Duplicate GPU" in str(exc):
                    fail(f"global_accuracy in the worker of rank {rank} raised {type(exc).__name__}: "
                         f"{str(exc).splitlines()[-1]}\n{explain(exc)}")
                if devices[rank].type != "cuda" and "cuda" in str(exc).lower():
                    fail(f"global_accuracy in the worker of rank {rank} raised {type(exc).__name__}: {exc}\n"
                         "torch.cuda and .cuda() serve NVIDIA GPUs only, and this code must run on any accelerator: "
                         "name the device of the data, labels.device.")
                raise

    got = play(Job(2), worker)
    for rank in range(2):
        value = got[rank]
        if isinstance(value, torch.Tensor):
            fail(f"global_accuracy returned a tensor ({value.dtype}, shape {tuple(value.shape)}, on {value.device}) "
                 f"on rank {rank}; it promises a Python float: .item() of the result.")
        if not isinstance(value, float):
            fail(f"global_accuracy returned {type(value).__name__} {value!r}; it promises a Python float.")
        local = shards[rank][2] / sizes[rank]
        mean = (shards[0][2] / sizes[0] + shards[1][2] / sizes[1]) / 2
        if abs(value - local) < 1e-9 and abs(local - want) > 1e-6:
            fail(f"the worker of rank {rank} returned {value:.4f}, the accuracy of its own shard only; over both "
                 f"shards it is {want:.4f}. dist.all_reduce changes the tensor it is given in place: reduce the "
                 "counts tensor itself (a tensor made by .to(device) inside the call is a new one, and its sum is "
                 "lost), then divide.")
        if abs(value - mean) < 1e-9 and abs(mean - want) > 1e-6:
            fail(f"the worker of rank {rank} returned {value:.4f}, the mean of the two shards' accuracies; the "
                 f"shards differ in size ({sizes}), so sum the correct predictions and the examples, then divide "
                 f"({want:.4f}).")
        expect_close(torch.tensor(value), torch.tensor(want), f"global_accuracy on rank {rank}")
