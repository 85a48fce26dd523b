"""Iterative deep copy with an explicit stack instead of recursion."""
import torch


def to_device(batch, device):
    def conv(v):
        if isinstance(v, torch.Tensor):
            return v.to(device)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, tuple):
            return tuple(conv(x) for x in v)
        return v
    return conv(batch)
