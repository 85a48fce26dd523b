# expect: the right kind of device, another index
# on one gpu: passes (with one GPU, index 0 is the only device; the simulator has two, as a two-GPU machine)
"""Recurses, but builds the target as "<type>:0", the first device of the kind, whatever device it is given."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        kind = torch.device(device).type
        return batch.to(kind if kind == "cpu" else f"{kind}:0")
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
