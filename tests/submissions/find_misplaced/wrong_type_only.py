# expect: says 'all clear' while the bug is there
import torch
from torch import nn


def find_misplaced(obj, device):
    kind = torch.device(device).type          # "cuda" is "cuda", whatever the index
    out = []

    def walk(x, path):
        if isinstance(x, torch.Tensor):
            if x.device.type != kind:
                out.append(path)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, f"{path}.{i}" if path else str(i))

    if isinstance(obj, nn.Module):
        for prefix, sub in obj.named_modules():
            for attr, v in [*sub._parameters.items(), *sub._buffers.items(), *vars(sub).items()]:
                name = f"{prefix}.{attr}" if prefix else attr
                if isinstance(v, torch.Tensor) and v.device.type != kind and name not in out:
                    out.append(name)
        return out
    walk(obj, "")
    return out
