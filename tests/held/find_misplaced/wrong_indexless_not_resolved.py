# expect: reported
"""Complete walk, but an index-less device ('cuda') is compared as is, so every tensor on cuda:0 is reported."""
import torch
from torch import nn


def find_misplaced(obj, device):
    device = torch.device(device)
    out = []
    if isinstance(obj, nn.Module):
        out += [n for n, t in [*obj.named_parameters(), *obj.named_buffers()] if t.device != device]
        for prefix, sub in obj.named_modules():
            registered = set(sub._parameters) | set(sub._buffers)
            for attr, v in vars(sub).items():
                if isinstance(v, torch.Tensor) and attr not in registered and v.device != device:
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
