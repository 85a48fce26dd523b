"""A device picker that never picks the GPU.

pick_device() should return the device this machine should train on: its accelerator when it has one
that PyTorch can use (an NVIDIA or AMD GPU, an Apple GPU, an Intel GPU, ...), and the CPU otherwise.
build_model() puts a fresh model there, and the training script moves every batch to the same place.

On a laptop it answers "cpu", as it should. On a GPU server it answers "cpu" too: nothing crashes,
training just runs many times slower than it could. Fix pick_device so that it finds the accelerator
of any machine, not only the kinds listed here.

Check your fix with:  devcourse check pick_device
"""

import torch
from torch import nn

SUPPORTED = ("cuda", "mps")


def pick_device() -> torch.device:
    accelerator = torch.accelerator.current_accelerator()
    if accelerator in SUPPORTED:
        return accelerator
    return torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)


if __name__ == "__main__":
    print("training on", pick_device())
