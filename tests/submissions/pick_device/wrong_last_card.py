# expect: without pinning an index
# on one gpu: passes (with one card the last card is the current one; the simulator has two, as the two-GPU machine)
"""Picks the last card, 'usually the free one', instead of the current device."""
import torch
from torch import nn


def pick_device() -> torch.device:
    if torch.accelerator.is_available():
        kind = torch.accelerator.current_accelerator().type
        return torch.device(kind, torch.accelerator.device_count() - 1)
    return torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
