"""A small generic 'apply to every leaf' helper, then to_device on top of it."""
import torch


def _apply(obj, fn):
    if isinstance(obj, dict):
        return {k: _apply(v, fn) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return tuple(_apply(v, fn) for v in obj)
    if isinstance(obj, list):
        return [_apply(v, fn) for v in obj]
    return fn(obj)


def to_device(batch, device):
    return _apply(batch, lambda leaf: leaf.to(device, non_blocking=True) if torch.is_tensor(leaf) else leaf)
