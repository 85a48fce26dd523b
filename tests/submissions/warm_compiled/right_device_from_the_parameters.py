import torch
from torch import nn


def prepare(model: nn.Module, device: torch.device, example: torch.Tensor) -> nn.Module:
    model = model.to(device)
    model.train(False)
    where = next(model.parameters()).device
    compiled = torch.compile(model)
    with torch.no_grad():
        _ = compiled(example.to(where))
    return compiled
