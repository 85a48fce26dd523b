# expect: move tensors without converting them
"""Recurses, and 'helpfully' makes every tensor float32 on the way (masks and ids included)."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, dtype=torch.float32)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
