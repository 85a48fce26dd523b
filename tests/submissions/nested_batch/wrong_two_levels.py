# expect: must recurse into lists, tuples and dicts
"""Looks one level deeper than the original, but not at any depth."""

import torch


def _move(v, device):
    return v.to(device) if isinstance(v, torch.Tensor) else v


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        items = batch.items()
        return {k: (type(v)(_move(e, device) for e in v) if isinstance(v, (list, tuple)) else _move(v, device))
                for k, v in items}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_move(v, device) for v in batch)
    return batch
