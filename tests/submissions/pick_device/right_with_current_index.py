import torch
from torch import nn


def pick_device() -> torch.device:
    if torch.accelerator.device_count() > 0:
        kind = torch.accelerator.current_accelerator().type
        return torch.device(kind, torch.accelerator.current_device_index())
    return torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
