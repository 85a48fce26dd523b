"""Recursion through collections.abc types, with non_blocking copies."""

from collections.abc import Mapping

import torch


def to_device(batch, device, non_blocking=False):
    if torch.is_tensor(batch):
        return batch.to(device=device, non_blocking=non_blocking)
    if isinstance(batch, Mapping):
        return type(batch)((key, to_device(value, device, non_blocking)) for key, value in batch.items())
    if isinstance(batch, list):
        return [to_device(value, device, non_blocking) for value in batch]
    if isinstance(batch, tuple):
        return tuple(to_device(value, device, non_blocking) for value in batch)
    return batch
