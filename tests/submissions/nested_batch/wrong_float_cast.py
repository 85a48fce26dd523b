# expect: converting
"""Recurses and moves, but casts floating tensors to half to save bandwidth."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, dtype=torch.half) if batch.is_floating_point() else batch.to(device)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
