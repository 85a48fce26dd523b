"""A DistributedDataParallel model that never reaches its GPU.

A job trains with one worker process per GPU, started by torchrun; its process group (NCCL) is up when this code
runs. The worker of local rank i owns the node's accelerator device i. Each worker builds the model on the CPU,
then wraps it for data-parallel training, which averages the gradients of every worker after each backward.

    wrap(model, local_rank)  in the worker of `local_rank`, with the model just built on the CPU: returns it
                             wrapped in DistributedDataParallel for training on the worker's GPU, the
                             parameters there, and the batches the training loop passes as the DataLoader
                             yields them (on the CPU) moved there by DDP itself (its device_ids).

The code is device-agnostic: it reaches the accelerator through torch.accelerator, never torch.cuda.

Every worker dies in wrap with "ValueError: DistributedDataParallel device_ids and output_device arguments only
work with single-device/multiple-device GPU modules or CPU modules, but got device_ids [1], output_device None,
and module parameters {device(type='cpu')}." Fix it.

Check your fix with:  devcourse check ddp_device_ids
"""

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def wrap(model: nn.Module, local_rank: int) -> DistributedDataParallel:
    # device_ids names the GPU that holds the whole model: put the model there first.
    device = torch.device(torch.accelerator.current_accelerator().type, local_rank)
    return DistributedDataParallel(model.to(device), device_ids=[local_rank])
