# expect: where the accelerator has no usable device
# on cuda: passes (every GPU of a GPU machine is usable; the simulated legs, on every machine, also stand for one whose accelerator has none)
"""Returns current_accelerator() as is: None on a CPU-only build, and a GPU kind even where none is usable."""
import torch
from torch import nn


def pick_device() -> torch.device:
    return torch.accelerator.current_accelerator()


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
