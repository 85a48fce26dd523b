# expect: leave values that are not tensors as they are
"""Recurses, and turns every number it meets into a device tensor too."""

import torch


def to_device(batch, device):
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    if isinstance(batch, (int, float)):
        return torch.as_tensor(batch, device=device)
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    return batch
