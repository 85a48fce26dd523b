# expect: copies
"""Keeps the type-only device but runs predict inside torch.device(index) of the model; copies via the current device."""
import torch
from torch import nn


def model_device(model):
    return next(model.parameters()).device


def predict(model, batch):
    d = model_device(model)
    x = batch.to(d.type).to(d)
    return model(x).argmax(dim=1)
