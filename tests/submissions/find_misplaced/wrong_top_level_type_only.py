# expect: cannot tell them apart
"""Walks everything, but compares device types at the top of a batch (and everywhere): on two devices of one kind
nothing is reported. The message must say the index was lost, not advise a recursive walk (issue 27)."""
import torch
from torch import nn


def _off(t, device):
    return t.device.type != device.type


def find_misplaced(obj, device):
    device = torch.device(device)
    out = []
    if isinstance(obj, nn.Module):
        for prefix, sub in obj.named_modules():
            for attr, v in [*sub._parameters.items(), *sub._buffers.items(), *vars(sub).items()]:
                name = f"{prefix}.{attr}" if prefix else attr
                if isinstance(v, torch.Tensor) and _off(v, device) and name not in out:
                    out.append(name)
        return out

    def walk(x, path):
        if isinstance(x, torch.Tensor):
            if _off(x, device):
                out.append(path)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, f"{path}.{i}" if path else str(i))

    walk(obj, "")
    return out
