"""Grader for ddp_device_ids: DistributedDataParallel with device_ids wraps a model already on that GPU.

A job of two workers on one node, played one after the other in this process on a pair of devices (sim:0 and
sim:1; cuda:0 and cuda:1 on a two-GPU machine) by grader.simulated.collectives (one GPU per worker, as NCCL
demands; each worker starts with device 0 current, as a fresh process). Each worker wraps a fresh copy of one
model built on the CPU, runs a training step on a CPU batch of its own (fresh each run) and must find its
parameters, output and gradients on its own device, the gradients averaged over both workers' batches, as DDP
computes them."""

import copy
import random

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from grader.engine.expect import cuda_call_note, devices_in, expect_close, expect_device, fail, running
from grader.simulated.collectives import Job, play

FIX = ("device_ids names the GPU that holds the whole model, and DDP checks the model's parameters, it does not "
       "move them: move the model to the worker's GPU (torch.device(<accelerator>, local_rank)) before wrapping "
       "it, and give device_ids that same GPU.")


def explain(rank, devices):
    def explanation(exc) -> str:
        text = str(exc)
        if "only work with single-device" in text:
            return f"the model is still on the CPU when DDP wraps it: {FIX}"
        if "No backend type associated with device type cpu" in text:
            return ("the model's weights are on the CPU, and DDP's collectives (it broadcasts rank 0's weights) go "
                    f"through NCCL, which moves GPU memory only: {FIX}")
        if "Duplicate GPU detected" in text:
            return ("both workers' models are on one GPU: an accelerator named without its index means the current "
                    f"device, device 0 in a fresh process. Use the worker's own GPU, {devices[rank]}: {FIX}")
        if "cpu" in devices_in(exc):
            return ("the batch stayed on the CPU: the training loop passes batches as the DataLoader yields them, and "
                    "DDP moves them only to the GPU its device_ids names. Give DDP device_ids=[local_rank] with the "
                    "model on that GPU.")
        return f"DDP moved the batch to the GPU of device_ids, which is not where the model is: {FIX}"
    return explanation


def test_each_worker_trains_on_its_own_gpu(submission, devices):
    features, outputs = random.randint(3, 8), random.randint(2, 5)
    model = nn.Sequential(nn.Linear(features, 16), nn.Tanh(), nn.Linear(16, outputs))
    batches = [torch.randn(random.randint(4, 12), features) for _ in devices]
    grads = []
    for batch in batches:  # the reference: DDP averages the gradients of the workers' losses
        ref = copy.deepcopy(model)
        ref(batch).square().mean().backward()
        grads.append([p.grad for p in ref.parameters()])
    want = [(a + b) / 2 for a, b in zip(*grads)]

    def worker(rank):
        mine = copy.deepcopy(model)
        what = f"wrap(model, {rank}) and a training step, in the worker of local rank {rank}"
        with running(what, submission, explain_device_error=explain(rank, devices)):
            try:
                wrapped = submission.wrap(mine, rank)
                out = wrapped(batches[rank].clone())
                out.square().mean().backward()
            except Exception as exc:
                if any(k in str(exc) for k in ("only work with single-device", "Duplicate GPU", "No backend type")):
                    fail(f"{what} raised {type(exc).__name__}: {str(exc).splitlines()[-1]}\n"
                         f"{explain(rank, devices)(exc)}")
                if cuda_call_note(exc, devices[rank]):
                    fail(f"{what} raised {type(exc).__name__}: {exc}{cuda_call_note(exc, devices[rank])}")
                raise
        return wrapped, out, list(mine.parameters())

    got = play(Job(2), worker)
    for rank, device in enumerate(devices):
        wrapped, out, params = got[rank]
        if not isinstance(wrapped, DistributedDataParallel):
            fail(f"wrap returned {type(wrapped).__name__}; it promises the model wrapped in DistributedDataParallel.")
        for p in params:
            expect_device(p, device, f"a parameter of the wrapped model of local rank {rank}", FIX)
        expect_device(out, device, f"the output of the wrapped model of local rank {rank}",
                      "give DDP device_ids=[local_rank], so that it moves each batch to the worker's GPU.")
        for p, g in zip(params, want):
            if p.grad is None:
                fail(f"after backward, a parameter of the model of local rank {rank} has no gradient.")
            expect_close(p.grad.cpu(), g, f"the averaged gradients of the model of local rank {rank}")
