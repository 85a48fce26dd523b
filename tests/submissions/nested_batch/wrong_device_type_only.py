# expect: the right kind of device, another index
# on one gpu: passes (with one GPU, cuda is cuda:0, the only device; the simulator has two, as a two-GPU machine)
"""Recurses, but moves every tensor to the device's type only ("cuda" rather than "cuda:1"), which means the
current device: on a machine with several GPUs the batch lands on the wrong one."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(torch.device(device).type)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
