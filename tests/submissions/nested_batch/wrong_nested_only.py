# expect: was not moved at all
"""Recurses into the containers, but the branch for a tensor returns it unmoved: it was meant as the base case
of the recursion, and the .to(device) went into the container branches, for their direct entries only."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(v.to(device) if isinstance(v, torch.Tensor) else to_device(v, device) for v in batch)
    return batch
