# expect: plain tensor attribute
"""Uses state_dict(keep_vars=True): parameters and buffers, but no plain tensor attributes."""
import torch
from torch import nn


def find_misplaced(obj, device):
    device = torch.device(device)
    out = []

    def walk(x, path):
        if isinstance(x, torch.Tensor):
            if x.device != device:
                out.append(".".join(path))
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, [*path, str(k)])
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, [*path, str(i)])

    if isinstance(obj, nn.Module):
        return [name for name, t in obj.state_dict(keep_vars=True).items() if t.device != device]
    walk(obj, [])
    return out
