"""The simulated NCCL-like group (grader/simulated/collectives.py) and producer/consumer handoff
(grader/simulated/processes.py) that the chapter "Distributed workers" grades with, and their fidelity to what
real NCCL, DDP and CUDA IPC say (tests/simulated/fidelity_distributed.py, recorded on a GPU)."""
import copy
import json
import os

import pytest
import torch
import torch.distributed as dist
from torch import nn

from grader.simulated import processes
from grader.simulated.collectives import Job, as_rank, play
from tests.simulated import fidelity_distributed


def test_a_cpu_tensor_is_refused_in_c10d_words_and_each_rank_starts_on_device_0():
    job = Job(2)
    with as_rank(job, 1):
        assert torch.accelerator.current_device_index() == 0 and dist.get_rank() == 1
        with pytest.raises(RuntimeError, match=r"^No backend type associated with device type cpu$"):
            dist.all_reduce(torch.ones(2))
    assert not dist.is_initialized()


def test_two_ranks_on_one_device_are_a_duplicate_gpu():
    job = Job(2)
    with as_rank(job, 0):
        dist.all_reduce(torch.ones(1, device="sim:0"))
    with as_rank(job, 1), pytest.raises(dist.DistBackendError,
                                        match="Duplicate GPU detected : rank 1 and rank 0 both on SIM device 0"):
        dist.all_reduce(torch.ones(1, device="sim:0"))


def test_playing_every_rank_twice_gives_every_rank_the_jobs_sum():
    values = [torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])]

    def run(rank):
        t = values[rank].to(f"sim:{rank}")
        dist.all_reduce(t)
        gathered = [torch.empty(2, device=f"sim:{rank}") for _ in range(2)]
        dist.all_gather(gathered, values[rank].to(f"sim:{rank}"))
        return t.cpu(), [g.cpu() for g in gathered]

    got = play(Job(2), run)
    for rank in range(2):
        assert got[rank][0].tolist() == [11.0, 22.0]
        assert [g.tolist() for g in got[rank][1]] == [[1.0, 2.0], [10.0, 20.0]]


def test_ddp_averages_the_gradients_of_both_ranks_on_their_devices():
    model = nn.Linear(3, 2)
    batches = [torch.randn(4, 3), torch.randn(6, 3)]
    grads = []
    for b in batches:
        ref = copy.deepcopy(model)
        ref(b).sum().backward()
        grads.append(ref.weight.grad)

    def run(rank):
        mine = copy.deepcopy(model).to(f"sim:{rank}")
        ddp = nn.parallel.DistributedDataParallel(mine, device_ids=[rank])
        ddp(batches[rank]).sum().backward()
        return mine.weight.grad

    got = play(Job(2), run)
    for rank in range(2):
        assert got[rank].device == torch.device("sim", rank)
        torch.testing.assert_close(got[rank].cpu(), (grads[0] + grads[1]) / 2)


def test_the_consumer_reads_while_the_producer_waits_and_not_after_it_exits():
    read = []
    waited = processes.Handoff(2, read.extend)
    waited.queue.put(1)
    waited.queue.put(2)
    assert waited.done.wait() and read == [1, 2] and waited.consumed_while_alive
    gone = processes.Handoff(1, read.extend)
    gone.queue.put(3)
    gone.producer_exits()
    assert gone.consumed_while_alive is False
    early = processes.Handoff(2, read.extend)
    early.queue.put(4)
    assert early.done.is_set() is False and early.done.wait(timeout=1.0) is False
    with pytest.raises(processes.Deadlock):
        early.done.wait()


def _recorded():
    if not os.path.exists(fidelity_distributed.TABLE):
        pytest.skip("awaits a GPU run: python -m tests.simulated.fidelity_distributed (tools/GPU_RUNS.md)")
    with open(fidelity_distributed.TABLE) as f:
        return json.load(f)["rows"]


@pytest.mark.parametrize("scenario, phrase", [
    ("cpu tensor to an NCCL all_reduce", "No backend type associated with device type cpu"),
    ("two ranks on one GPU", "Duplicate GPU detected : rank 1 and rank 0 both on"),
    ("DDP without device_ids, CPU batch", "Expected all tensors to be on the same device"),
    ("producer exits first", processes.TERMINATED),
])
def test_the_simulated_words_are_the_gpus(scenario, phrase):
    """The phrase each grader relies on (the simulated group's, the handoff's) is in what a GPU said."""
    assert phrase in _recorded()[scenario]


def test_reduce_gives_the_root_the_sum():
    def run(rank):
        t = torch.full((2,), float(rank + 1), device=f"sim:{rank}")
        dist.reduce(t, dst=0)
        return t.cpu().tolist()

    assert play(Job(2), run) == {0: [3.0, 3.0], 1: [2.0, 2.0]}
