"""Uses device_count() as the availability test and returns the accelerator as a torch.device."""
import torch
from torch import nn


def pick_device() -> torch.device:
    acc = torch.accelerator.current_accelerator()
    return torch.device(acc) if acc is not None and torch.accelerator.device_count() else torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
