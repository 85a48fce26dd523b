"""Batches sent to the wrong GPU.

An inference server runs one model per GPU: model 0 on cuda:0, model 1 on cuda:1, and so on. Requests
arrive as CPU tensors; predict(model, batch) sends the batch to the model's GPU and returns the predicted
classes there.

    model_device(model)   the device the model's weights live on, index included
    predict(model, batch) batch: float (B, F) on the CPU; returns int64 (B,) class ids on the model's device

With one GPU everything works. With two, every model except the first fails with "Expected all tensors to
be on the same device, but found at least two devices, cuda:0 and cuda:1!". Fix it.

Check your fix with:  devcourse check model_device
"""

import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    kind = next(model.parameters()).device.type       # "cpu" or "cuda"
    return torch.device(kind)


def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    x = batch.to(model_device(model))
    return model(x).argmax(dim=1)
