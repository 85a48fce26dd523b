import torch
from torch import nn


def prepare(model: nn.Module, device: torch.device, example: torch.Tensor) -> nn.Module:
    compiled = torch.compile(model.eval())
    compiled.to(device)                 # moves the model it wraps: nothing is compiled until the first call
    with torch.no_grad():
        compiled(example.to(device))
    return compiled
