import torch
from torch import nn


def find_misplaced(obj, device):
    device = torch.device(device)
    out = []
    if isinstance(obj, nn.Module):
        for prefix, sub in obj.named_modules():
            for attr, value in list(sub._parameters.items()) + list(sub._buffers.items()) + list(vars(sub).items()):
                if isinstance(value, torch.Tensor) and value.device != device:
                    name = f"{prefix}.{attr}" if prefix else attr
                    if name not in out:
                        out.append(name)
        return out
    stack = [("", obj)]
    while stack:
        path, x = stack.pop()
        if isinstance(x, torch.Tensor):
            if x.device != device:
                out.append(path)
        elif isinstance(x, (dict, list, tuple)):
            items = x.items() if isinstance(x, dict) else enumerate(x)
            stack += [(f"{path}.{k}" if path else str(k), v) for k, v in items]
    return out
