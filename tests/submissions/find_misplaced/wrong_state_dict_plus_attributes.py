# expect: buffers
"""Uses state_dict(keep_vars=True) plus plain attributes: non-persistent buffers (rotary caches, masks) are missed."""
import torch
from torch import nn


def find_misplaced(obj, device):
    device = torch.device(device)
    out = []
    if isinstance(obj, nn.Module):
        for name, t in obj.state_dict(keep_vars=True).items():
            if t.device != device:
                out.append(name)
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
