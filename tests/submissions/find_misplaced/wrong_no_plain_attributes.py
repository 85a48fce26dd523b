# expect: plain tensor attribute
import torch
from torch import nn


def find_misplaced(obj, device) -> list[str]:
    device = torch.device(device)
    if isinstance(obj, nn.Module):
        tensors = list(obj.named_parameters()) + list(obj.named_buffers())
    elif isinstance(obj, dict):
        tensors = [(k, v) for k, v in obj.items() if isinstance(v, torch.Tensor)]
    else:
        tensors = [("", obj)] if isinstance(obj, torch.Tensor) else []
    return [name for name, t in tensors if t.device != device]
