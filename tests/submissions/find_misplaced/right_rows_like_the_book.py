import torch
from torch import nn


def _rows(obj, path=()):
    if isinstance(obj, nn.Module):
        rows = [(n, t) for n, t in obj.named_parameters()] + [(n, t) for n, t in obj.named_buffers()]
        for prefix, sub in obj.named_modules():
            registered = set(sub._parameters) | set(sub._buffers)
            for attr, value in vars(sub).items():
                if torch.is_tensor(value) and attr not in registered:
                    rows.append((f"{prefix}.{attr}".lstrip("."), value))
        return rows
    if torch.is_tensor(obj):
        return [(".".join(path), obj)]
    if isinstance(obj, dict):
        return [row for k, v in obj.items() for row in _rows(v, (*path, str(k)))]
    if isinstance(obj, (list, tuple)):
        return [row for i, v in enumerate(obj) for row in _rows(v, (*path, str(i)))]
    return []


def find_misplaced(obj, device) -> list[str]:
    want = str(torch.device(device))
    return [name for name, t in _rows(obj) if str(t.device) != want]
