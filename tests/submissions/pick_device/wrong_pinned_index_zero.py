# expect: without pinning an index
# on one gpu: passes (a lost index means the only GPU, the one given; the simulator has two devices and makes the other current)
import torch
from torch import nn


def pick_device() -> torch.device:
    if torch.accelerator.is_available():
        return torch.device(torch.accelerator.current_accelerator().type, 0)   # always the first card
    return torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
