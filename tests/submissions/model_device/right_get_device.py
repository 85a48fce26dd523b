"""Rebuilds the device from the parameter's type and get_device() (-1 on the CPU)."""
import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    p = next(model.parameters())
    index = p.get_device()
    return torch.device("cpu") if index < 0 else torch.device(p.device.type, index)


@torch.inference_mode()
def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    return model(batch.to(model_device(model), non_blocking=True)).argmax(dim=-1)
