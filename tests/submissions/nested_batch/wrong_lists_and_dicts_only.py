# expect: must recurse into lists, tuples and dicts
"""Recurses into lists and dicts; tuples fall through to 'other values' and stay on the CPU."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, list):
        return [to_device(v, device) for v in batch]
    return batch
