# expect: int64
"""Right device, but returns the classes as int32."""
import torch
from torch import nn


def model_device(model):
    return next(model.parameters()).device


def predict(model, batch):
    return model(batch.to(model_device(model))).argmax(dim=1).int()
