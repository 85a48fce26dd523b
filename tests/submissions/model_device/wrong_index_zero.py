# expect: the index is not the model's
"""Adds an index, but always 0: the first GPU, whichever the model is on."""
import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    kind = next(model.parameters()).device.type
    return torch.device("cpu") if kind == "cpu" else torch.device(kind, 0)


def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    return model(batch.to(model_device(model))).argmax(dim=1)
