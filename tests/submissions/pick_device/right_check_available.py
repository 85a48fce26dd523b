import torch
from torch import nn


def pick_device() -> torch.device:
    # None when the build's accelerator is not usable on this machine.
    return torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
