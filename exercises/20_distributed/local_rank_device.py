"""A job that trains on one node and dies on the second.

A job runs on several nodes, one worker process per GPU on each, all started by torchrun, which gives every worker
its place in the job in its environment:

    RANK              the worker's number in the whole job, 0 to WORLD_SIZE - 1
    LOCAL_RANK        its number on its own node, 0 to LOCAL_WORLD_SIZE - 1
    WORLD_SIZE        the number of workers in the job; LOCAL_WORLD_SIZE: on this node
    GROUP_RANK        the number of its node (torchrun's --node-rank)

    worker_device(env)  called first in each worker with its environment (a dict of strings): makes the worker's
                        own GPU, the node's accelerator device numbered by the worker's place on that node, the
                        current device, and returns it (a torch.device with its index).

The code is device-agnostic: it reaches the accelerator through torch.accelerator, never torch.cuda
(torch.accelerator.set_device_index(i) does for any accelerator what torch.cuda.set_device(i) does for CUDA).

On one node of two GPUs the job trains. On two nodes, every worker of the second node dies at once with
"CUDA error: invalid device ordinal". Fix it.

Check your fix with:  devcourse check local_rank_device
"""

import torch


def worker_device(env: dict[str, str]) -> torch.device:
    index = int(env["RANK"])
    torch.accelerator.set_device_index(index)
    return torch.device(torch.accelerator.current_accelerator().type, index)
