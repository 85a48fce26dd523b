# expect: it must not move or copy anything
"""Decides 'misplaced' by whether t.to(device) returns a new tensor: every stray tensor gets copied."""
import torch
from torch import nn


def find_misplaced(obj, device):
    out = []

    def check(name, t):
        if t.to(device) is not t:
            out.append(name)

    if isinstance(obj, nn.Module):
        for name, t in [*obj.named_parameters(), *obj.named_buffers()]:
            check(name, t)
        for prefix, sub in obj.named_modules():
            for attr, v in vars(sub).items():
                if isinstance(v, torch.Tensor):
                    check(f"{prefix}.{attr}" if prefix else attr, v)
        return out

    def walk(x, path):
        if isinstance(x, torch.Tensor):
            check(".".join(path), x)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, [*path, str(k)])
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, [*path, str(i)])

    walk(obj, [])
    return out
