# expect: ask torch.accelerator which accelerator this machine has
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
import torch
from torch import nn


def pick_device() -> torch.device:
    return torch.device("cuda")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
