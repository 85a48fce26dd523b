"""Takes the device from the first tensor of the state_dict, and moves the batch with device=/dtype=."""
import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    first = next(iter(model.state_dict().values()))
    return first.device


def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    x = batch.to(device=model_device(model), dtype=torch.float32)
    with torch.no_grad():
        return torch.argmax(model(x), dim=1)
