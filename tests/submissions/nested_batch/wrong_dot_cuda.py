# expect: raised
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""Recurses correctly but moves tensors with .cuda(), which knows only CUDA."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.cuda(torch.device(device).index) if torch.device(device).type != "cpu" else batch
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
