"""Structural pattern matching; each container rebuilt with its own type."""
import torch


def to_device(batch, device):
    device = torch.device(device)
    match batch:
        case torch.Tensor():
            return batch.to(device)
        case dict():
            return type(batch)((key, to_device(value, device)) for key, value in batch.items())
        case list() | tuple():
            return type(batch)(to_device(value, device) for value in batch)
        case _:
            return batch
