# expect: should be on
"""Runs the model on the device but hands back the predictions on the CPU."""
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches, device):
    model.to(device).eval()
    return torch.cat([model(x.to(device)).argmax(dim=1).cpu() for x in batches])
