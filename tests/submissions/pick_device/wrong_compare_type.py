# expect: ask torch.accelerator which accelerator this machine has
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
import torch
from torch import nn

SUPPORTED = ("cuda", "mps")


def pick_device() -> torch.device:
    # Fixes the string comparison, keeps the list: every other accelerator still gets the CPU.
    accelerator = torch.accelerator.current_accelerator()
    if accelerator is not None and accelerator.type in SUPPORTED and torch.accelerator.is_available():
        return accelerator
    return torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)
