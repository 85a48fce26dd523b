# expect: a device without its index means the current device
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Asks torch.accelerator for 'the' accelerator: that is the current device, not the model's."""
import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    if next(model.parameters()).device.type == "cpu":
        return torch.device("cpu")
    return torch.device(torch.accelerator.current_accelerator().type, torch.accelerator.current_device_index())


def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    return model(batch.to(model_device(model))).argmax(dim=1)
