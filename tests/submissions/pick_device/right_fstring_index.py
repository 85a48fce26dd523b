"""Spells the device as a 'kind:index' string from torch.accelerator's current index."""
import torch
from torch import nn


def pick_device():
    acc = torch.accelerator.current_accelerator(check_available=True)
    if acc is None:
        return "cpu"
    return f"{acc.type}:{torch.accelerator.current_device_index()}"


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
