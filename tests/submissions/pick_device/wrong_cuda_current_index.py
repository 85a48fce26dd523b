# expect: pick_device() raised
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""Uses torch.accelerator for the kind but torch.cuda for the index: breaks on any non-CUDA accelerator."""
import torch
from torch import nn


def pick_device() -> torch.device:
    if torch.accelerator.is_available():
        return torch.device(torch.accelerator.current_accelerator().type, torch.cuda.current_device())
    return torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
