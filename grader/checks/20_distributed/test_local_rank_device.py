"""Grader for local_rank_device: a worker's GPU is numbered by LOCAL_RANK, not RANK.

A job of 2 to 4 nodes of two workers each; the workers of one node other than the first (where RANK and
LOCAL_RANK differ) are played one after the other in this process on a pair of devices (sim:0 and sim:1; cuda:0
and cuda:1 on a two-GPU machine), each with torchrun's environment for it and device 0 current, as a fresh process
starts. Each must get, and make current, the node's device of its local rank."""

import random

import torch

from grader.engine.expect import cuda_call_note, fail, running
from grader.simulated.collectives import Job, as_rank

FIX = ("RANK numbers the workers of the whole job (the second node's first worker is rank 2 on nodes of two GPUs), "
       "while each node numbers its own GPUs from 0: the worker's GPU is the one of its LOCAL_RANK.")


def environment(node, local, nodes, per_node):
    return {"RANK": str(node * per_node + local), "LOCAL_RANK": str(local), "WORLD_SIZE": str(nodes * per_node),
            "LOCAL_WORLD_SIZE": str(per_node), "GROUP_RANK": str(node), "ROLE_RANK": str(node * per_node + local),
            "MASTER_ADDR": "node0", "MASTER_PORT": str(random.randint(20000, 30000)),
            "TORCHELASTIC_RUN_ID": "job", "PATH": "/usr/bin"}


def explain(env):
    def explanation(exc) -> str:
        return f"the worker of RANK {env['RANK']} and LOCAL_RANK {env['LOCAL_RANK']} asked for another GPU: {FIX}"
    return explanation


def test_each_worker_of_a_later_node_takes_its_local_gpu(submission, devices):
    nodes, per_node = random.randint(2, 4), len(devices)
    node = random.randint(1, nodes - 1)
    job = Job(nodes * per_node)
    for local, device in enumerate(devices):
        env = environment(node, local, nodes, per_node)
        what = f"worker_device(env) in the worker of RANK {env['RANK']}, LOCAL_RANK {local} (node {node})"
        with as_rank(job, int(env["RANK"])):
            with running(what, submission):
                try:
                    got = submission.worker_device(dict(env))
                except Exception as exc:
                    if "invalid device ordinal" in str(exc):
                        fail(f"{what} raised {type(exc).__name__}: {str(exc).splitlines()[0]}\n{explain(env)(exc)}")
                    if cuda_call_note(exc, device):
                        fail(f"{what} raised {type(exc).__name__}: {exc}{cuda_call_note(exc, device)}")
                    raise
            current = torch.accelerator.current_device_index()
        try:
            got = torch.device(got)
        except Exception:
            fail(f"worker_device returned {got!r}; it promises a torch.device.")
        if got.type != device.type or got.index is None:
            fail(f"{what} returned {got}; it promises the accelerator's device with its index ({device}).")
        if got != device:
            fail(f"{what} returned {got}; that worker's GPU is {device}. {FIX}")
        if current != device.index:
            fail(f"after {what}, the current device is {device.type}:{current}, not the worker's {device}: make it "
                 "current, torch.accelerator.set_device_index(index) (torch.cuda.set_device on CUDA).")
