"""Grader for set_device_first: each worker makes its own GPU current before anything touches one.

A job of two workers on one node, played one after the other in this process on a pair of devices (sim:0 and
sim:1; cuda:0 and cuda:1 on a two-GPU machine) by grader.simulated.collectives: each starts as a fresh process
does, device 0 current, and the group refuses two workers on one device in NCCL's words ("Duplicate GPU
detected"). Fresh shards each run; each worker must return the sums over both shards on its own device, and
leave its own device current, as its statement promises."""

import random

import torch

from grader.engine.expect import cuda_call_note, expect_close, expect_device, fail, running
from grader.simulated.collectives import Job, play

FIX = ("a new process starts with device 0 current, and an accelerator named without its index "
       "(current_accelerator(), 'cuda', .cuda()) means the current device, so every worker used device 0. Make "
       "the worker's own GPU current first thing: torch.accelerator.set_device_index(local_rank) "
       "(torch.cuda.set_device(local_rank) on CUDA), before anything touches the GPU.")


def test_each_worker_works_on_its_own_gpu(submission, devices):
    features = random.randint(3, 9)
    shards = [torch.randn(random.randint(5, 40), features) for _ in devices]
    want = sum((s.double() ** 2).sum(dim=0) for s in shards).float()
    current = {}

    def worker(rank):
        with running(f"feature_sums({rank}, shard) in the worker of local rank {rank}", submission):
            try:
                out = submission.feature_sums(rank, shards[rank].clone())
            except Exception as exc:
                if "Duplicate GPU detected" in str(exc):
                    fail(f"feature_sums in the worker of local rank {rank} raised {type(exc).__name__}: "
                         f"{str(exc).splitlines()[-1]}\n{FIX}")
                if cuda_call_note(exc, devices[rank]):
                    fail(f"feature_sums in the worker of local rank {rank} raised {type(exc).__name__}: {exc}"
                         f"{cuda_call_note(exc, devices[rank])}")
                raise
        current[rank] = torch.accelerator.current_device_index()
        return out

    got = play(Job(2), worker)
    for rank, device in enumerate(devices):
        expect_device(got[rank], device, f"the sums returned by the worker of local rank {rank}", FIX)
        if current[rank] != device.index:
            fail(f"after feature_sums, the worker of local rank {rank} has {device.type}:{current[rank]} as its "
                 f"current device, not its own {device}: anything that names the accelerator without an index "
                 "(a library's allocations, .cuda()) would still land there. Its statement asks it to make its GPU "
                 "current: torch.accelerator.set_device_index(local_rank) (torch.cuda.set_device on CUDA).")
        expect_close(got[rank].cpu(), want, f"the sums of the worker of local rank {rank}")
