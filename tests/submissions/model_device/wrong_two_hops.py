# expect: copies from the host
"""Fixes model_device, but predict first sends the batch to the accelerator, then on to the model's GPU."""
import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    dev = model_device(model)
    x = batch.to(dev.type) if dev.type != "cpu" else batch      # "to the GPU" first
    return model(x.to(dev)).argmax(dim=1)
