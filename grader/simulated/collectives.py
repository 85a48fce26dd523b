"""An NCCL-like process group ("simccl") for graders that play each rank of a job, one after the other, in one
process.

A grading process may start no process and open no socket (grader/guard/sandbox.py), so a real job of two NCCL
workers cannot run inside it. Instead a check plays rank 0, then rank 1, each as a fresh process would start
(device 0 current), with `torch.distributed`'s default group initialised to this backend, and calls the learner's
per-rank code. The group keeps NCCL's rules that a device bug breaks, in NCCL's words:

* NCCL serves device tensors only: a collective given a CPU tensor raises c10d's "No backend type associated
  with device type cpu" (a group made with `init_process_group("nccl")` has no backend for the CPU);
* one GPU per rank: two ranks of a job whose collectives use one GPU fail as NCCL's communicator set-up does,
  "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device ..." (NCCL names the GPU by its PCI bus id,
  this group by its index).

The ranks run one after the other, each twice (`play`): a collective combines this rank's tensor with what the
other ranks sent to the same collective when they ran (a rank not run yet counts as sending what this one sends).
It runs on every accelerator leg (sim:N and cuda:N alike), so a verdict never depends on the machine; the
scenarios of tests/simulated/fidelity_distributed.py hold its messages to NCCL's on a GPU machine. Not served:
object collectives (all_gather_object...: c10d sends them through the CPU for a Python group, which it refuses)
and all_gather_into_tensor / reduce_scatter_tensor (c10d does not hand them to a Python group).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

NAME = "simccl"


def no_backend_error(device_type: str) -> RuntimeError:
    """c10d's own error for a tensor of a device type the group has no backend for (ProcessGroup::getBackend)."""
    return RuntimeError(f"No backend type associated with device type {device_type}")


def duplicate_gpu_error(rank: int, other: int, device: torch.device) -> Exception:
    """NCCL's refusal of two ranks on one GPU, as torch raises it (a DistBackendError)."""
    return dist.DistBackendError(
        "NCCL error in: ProcessGroupNCCL.cpp, invalid usage (run with NCCL_DEBUG=WARN for details)\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
        f"Last error:\nDuplicate GPU detected : rank {rank} and rank {other} both on "
        f"{device.type.upper()} device {device.index}")


@dataclass
class Job:
    """One job of `world_size` ranks, played one rank at a time. Each collective's k-th call on a rank records
    what that rank sent (`sent[(rank, k)]`, on the CPU); a rank's k-th collective combines its own tensor with
    what each other rank sent to its k-th one, or, for a rank not played yet, with a copy of its own. So a
    program whose collectives send what its own data says gets the job's true results by playing the ranks
    0, 1, ..., then each again (`play`). `claimed` maps each device a rank's collectives used to that rank;
    `calls` lists (rank, collective, device) in order, for the checks."""
    world_size: int
    claimed: dict = field(default_factory=dict)
    calls: list = field(default_factory=list)
    sent: dict = field(default_factory=dict)
    count: dict = field(default_factory=dict)

    def claim(self, rank: int, device: torch.device) -> None:
        if device.type == "cpu":
            raise no_backend_error("cpu")
        owner = self.claimed.setdefault(device, rank)
        if owner != rank:
            raise duplicate_gpu_error(rank, owner, device)

    def exchange(self, rank: int, tensor: torch.Tensor) -> list[torch.Tensor]:
        """Record what `rank` sends to its next collective; return what the other ranks send to theirs."""
        k = self.count[rank] = self.count.get(rank, -1) + 1
        mine = self.sent[(rank, k)] = tensor.detach().cpu().clone()
        others = []
        for other in range(self.world_size):
            if other != rank:
                theirs = self.sent.get((other, k))
                others.append(theirs if theirs is not None and theirs.shape == mine.shape else mine)
        return others

    def start(self, rank: int) -> None:
        self.count[rank] = -1


def play(job: Job, run: Callable[[int], object], order: list[int] | None = None) -> dict:
    """Run `run(rank)` as each rank of `job` (inside `as_rank`), then each rank again, so that every rank's
    collectives meet what the others really sent; returns each rank's last result. An exception ends it."""
    results = {}
    for rank in order or [*range(job.world_size), *range(job.world_size)]:
        with as_rank(job, rank):
            results[rank] = run(rank)
    return results


def _done(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


_REDUCE = {"SUM": lambda ts: torch.stack(ts).sum(0), "AVG": lambda ts: torch.stack(ts).mean(0),
           "MAX": lambda ts: torch.stack(ts).amax(0), "MIN": lambda ts: torch.stack(ts).amin(0),
           "PRODUCT": lambda ts: torch.stack(ts).prod(0)}


class SimCCL(dist.ProcessGroup):
    """The group of one rank of `job`: collectives check their tensors as NCCL does, then combine them with the
    other ranks' contributions."""

    def __init__(self, job: Job, rank: int):
        super().__init__(rank, job.world_size)
        self.job, self.me = job, rank

    def _use(self, op: str, tensors) -> None:
        for t in tensors:
            self.job.claim(self.me, t.device)
            self.job.calls.append((self.me, op, t.device))

    def allreduce(self, tensors, opts):
        self._use("all_reduce", tensors)
        op = str(opts.reduceOp.op).rsplit(".", 1)[-1] if hasattr(opts.reduceOp, "op") else "SUM"
        for t in tensors:
            mine = t.detach().cpu()
            combined = _REDUCE.get(op, _REDUCE["SUM"])([mine, *self.job.exchange(self.me, t)])
            with torch.no_grad():
                t.copy_(combined.to(t.dtype))
        return _done(tensors)

    def reduce(self, tensors, opts):
        """NCCL leaves non-root outputs unspecified; here they keep this rank's values."""
        self._use("reduce", tensors)
        op = str(opts.reduceOp.op).rsplit(".", 1)[-1] if hasattr(opts.reduceOp, "op") else "SUM"
        for t in tensors:
            combined = _REDUCE.get(op, _REDUCE["SUM"])([t.detach().cpu(), *self.job.exchange(self.me, t)])
            if opts.rootRank == self.me:
                with torch.no_grad():
                    t.copy_(combined.to(t.dtype))
        return _done(tensors)

    def broadcast(self, tensors, opts):
        self._use("broadcast", tensors)
        for t in tensors:
            sent = self.job.exchange(self.me, t)
            if opts.rootRank != self.me:
                with torch.no_grad():
                    t.copy_(sent[opts.rootRank - (opts.rootRank > self.me)].to(t.dtype))
        return _done(tensors)

    def allgather(self, outputs, inputs, opts):
        self._use("all_gather", inputs)
        for outs, t in zip(outputs, inputs):
            others = iter(self.job.exchange(self.me, t))
            for r, out in enumerate(outs):
                out.copy_(t if r == self.me else next(others))
        return _done(outputs)

    def barrier(self, opts):
        self.job.calls.append((self.me, "barrier", None))
        return _done(None)

    def getBackendName(self):
        return NAME


def _create(store, rank, world_size, timeout):
    return SimCCL(_JOB[0], rank)


_JOB: list = [None]


@contextmanager
def as_rank(job: Job, rank: int):
    """Inside: this process is rank `rank` of `job` as a freshly started worker is, before its code runs:
    `torch.distributed`'s default group is up (backend 'simccl') and device 0 of the accelerator is current."""
    if NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(NAME, _create, devices=[torch.accelerator.current_accelerator().type])
    if dist.is_initialized():
        dist.destroy_process_group()
    _JOB[0] = job
    job.start(rank)
    with torch.accelerator.device_index(0):
        hook = sys.excepthook
        dist.init_process_group(NAME, store=dist.HashStore(), rank=rank, world_size=job.world_size)
        sys.excepthook = hook  # init_process_group prefixes uncaught errors with the rank; the grader's hook stays
        try:
            yield
        finally:
            if dist.is_initialized():
                dist.destroy_process_group()
            _JOB[0] = None
