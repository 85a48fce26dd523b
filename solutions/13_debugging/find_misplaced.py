"""A device report that misses most of the suspects: solution.

model.to() moves parameters and registered buffers; a tensor kept as a plain attribute is moved by
nobody, and a batch is whatever the loader and the code made it. The report walks all three: the
module's parameters and buffers, the unregistered tensor attributes of every submodule, and every leaf
of a nested batch. Devices are compared in canonical form, so that "cuda" means the current GPU, cuda:0
(an index-less "cuda" never equals a tensor's device, which always has an index).
"""

import torch
from torch import nn


def _canonical(device) -> torch.device:
    device = torch.device(device)
    if device.type not in ("cpu", "meta") and device.index is None:
        return torch.device(device.type, torch.get_device_module(device.type).current_device())
    return device


def find_misplaced(obj, device) -> list[str]:
    device = _canonical(device)
    misplaced = []

    def off(t):
        return t.device != device       # a tensor's device has its index wherever devices have indices

    if isinstance(obj, nn.Module):
        for name, t in [*obj.named_parameters(), *obj.named_buffers()]:
            if off(t):
                misplaced.append(name)
        for prefix, sub in obj.named_modules():
            registered = set(sub._parameters) | set(sub._buffers)
            for attr, value in vars(sub).items():
                if isinstance(value, torch.Tensor) and attr not in registered and off(value):
                    misplaced.append(f"{prefix}.{attr}" if prefix else attr)
        return misplaced

    def walk(x, path):
        if isinstance(x, torch.Tensor):
            if off(x):
                misplaced.append(".".join(path))
        elif isinstance(x, dict):
            for key, value in x.items():
                walk(value, [*path, str(key)])
        elif isinstance(x, (list, tuple)):
            for i, value in enumerate(x):
                walk(value, [*path, str(i)])

    walk(obj, [])
    return misplaced
