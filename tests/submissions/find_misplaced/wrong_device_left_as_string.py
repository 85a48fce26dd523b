# expect: reported
"""Compares each tensor's device with the argument as given: a torch.device never equals a string like 'cuda:1'."""
import torch
from torch import nn


def find_misplaced(obj, device):
    out = []
    if isinstance(obj, nn.Module):
        out += [n for n, t in [*obj.named_parameters(), *obj.named_buffers()] if t.device != device]
        for prefix, sub in obj.named_modules():
            for attr, v in vars(sub).items():
                if isinstance(v, torch.Tensor) and v.device != device:
                    out.append(f"{prefix}.{attr}" if prefix else attr)
        return out

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

    walk(obj, [])
    return out
