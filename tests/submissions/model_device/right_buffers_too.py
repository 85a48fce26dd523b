"""Looks at parameters, then buffers, and keeps the tensor's own device."""
import itertools

import torch
from torch import nn


def model_device(model):
    for t in itertools.chain(model.parameters(), model.buffers()):
        return t.device
    return torch.device("cpu")


def predict(model, batch):
    return model(batch.to(model_device(model), non_blocking=True)).argmax(dim=1)
