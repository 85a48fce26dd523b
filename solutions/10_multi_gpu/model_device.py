"""Batches sent to the wrong GPU: the reference fix.

torch.device("cuda") has no index: it means the *current* device, cuda:0 unless set_device changed it.
Keeping only the device type throws away which GPU the model is on, so a batch for the model on cuda:1 is
sent to cuda:0. The parameter's own device, index included, is the answer.
"""

import torch
from torch import nn


def model_device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def predict(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    x = batch.to(model_device(model))
    return model(x).argmax(dim=1)
