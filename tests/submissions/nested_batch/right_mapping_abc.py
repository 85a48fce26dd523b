"""Recursion written with collections.abc Mapping and tuple/list checks."""
from collections.abc import Mapping

import torch


def to_device(batch, device):
    if torch.is_tensor(batch):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, Mapping):
        return type(batch)((k, to_device(v, device)) for k, v in batch.items())
    if isinstance(batch, (list, tuple)):
        return type(batch)([to_device(v, device) for v in batch])
    return batch
