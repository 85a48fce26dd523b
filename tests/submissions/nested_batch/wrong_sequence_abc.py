# expect: leave values that are not tensors
"""Recurses into any collections.abc.Sequence, which includes strings (rebuilt as str(generator))."""
from collections.abc import Mapping, Sequence

import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, Mapping):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, Sequence):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
