# expect: needs t.record_stream(that stream)
"""Capstone of "Beyond one device": one rank of a data-parallel run, its batches prefetched on a side stream.

train_rank(env, device_type, model, batches, all_reduce, lr) trains this process's replica of `model` for one pass
over its shard of the data, and returns the mean loss over the samples of every rank, as a Python float:

    - env is the environment the launcher (torchrun) gives the process: RANK, LOCAL_RANK, WORLD_SIZE and
      LOCAL_WORLD_SIZE, as strings. device_type is the machine's accelerator ("cuda", "xpu", ...) or "cpu". Every
      rank of a node has a device of its own, the one its local rank numbers (on "cpu", the CPU): ranks go on
      counting across the nodes of the run, while each node numbers its devices from 0
    - batches is this rank's shard: a list of (x, y) CPU tensors, as a Dataset gives them (pageable memory)
    - all_reduce(tensor) sums `tensor` over the ranks, in place, as torch.distributed.all_reduce does with the
      NCCL backend (with Gloo on "cpu"): NCCL reduces only tensors on the rank's device
    - each step: the cross-entropy loss of the batch, backward, each parameter's gradient all-reduced in
      model.parameters() order and divided by WORLD_SIZE, then one step of SGD (lr)
    - while a step runs, the next batch is copied to the device on a side stream, asynchronously: the host does
      not wait for the copy, and the step's work waits for it on the device
    - the mean loss is the sum of every sample's loss over all ranks divided by the number of samples of all ranks:
      each rank all-reduces, once, at the end, a tensor of two values, the sum of its samples' losses and its
      number of samples. Python waits for the device only to read the result

On a single machine whose ranks each have a GPU it trains, slowly. On a cluster it has four bugs of the chapters
of this part: a device numbered by the wrong rank, a total handed to NCCL on the CPU, batches that are not in
memory a copy can run from asynchronously, and a host that waits for every prefetch. Fix them.

Check your fix with:  devcourse check data_parallel_rank
"""

import torch
import torch.nn.functional as F


def rank_device(env, device_type: str) -> torch.device:
    if device_type == "cpu":
        return torch.device("cpu")
    return torch.device(device_type, int(env["RANK"]) % int(env["LOCAL_WORLD_SIZE"]))


def prefetched(batches, device: torch.device):
    """Yields the batches on `device`; the copy of the next batch runs on a side stream while one trains."""
    if device.type == "cpu":
        yield from batches
        return
    side = torch.Stream(device=device)
    compute = torch.accelerator.current_stream(device)

    def copy(batch):
        with side:
            return [t.pin_memory().to(device, non_blocking=True) for t in batch]

    upcoming = copy(batches[0])
    for k in range(len(batches)):
        torch.accelerator.current_stream(device).wait_stream(side)
        batch = upcoming
        if k + 1 < len(batches):
            upcoming = copy(batches[k + 1])
        yield batch


def train_rank(env, device_type: str, model, batches, all_reduce, lr: float = 0.05) -> float:
    device = rank_device(env, device_type)
    world_size = int(env["WORLD_SIZE"])
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_sum = torch.zeros((), device=device)
    samples = 0
    for x, y in prefetched(batches, device):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        for p in model.parameters():
            all_reduce(p.grad)
            p.grad /= world_size
        optimizer.step()
        loss_sum += loss.detach() * len(y)
        samples += len(y)
    totals = torch.stack([loss_sum, loss_sum.new_tensor(samples)])
    all_reduce(totals)
    return (totals[0] / totals[1]).item()
