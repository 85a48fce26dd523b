"""A device picker that never picks the GPU: solution.

Two things were wrong. A torch.device never compares equal to a string, so `accelerator in SUPPORTED`
was always False and every machine got the CPU. And a hand-written list of kinds ("cuda", "mps")
leaves out every other accelerator. torch.accelerator already knows which accelerator this build
supports; is_available() says whether the machine can use it right now (current_accelerator() alone
only reports what the build supports, so a CUDA build on a laptop without a GPU would still say cuda).
"""

import torch
from torch import nn


def pick_device() -> torch.device:
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    return torch.device("cpu")


def build_model(in_features: int, classes: int) -> nn.Module:
    device = pick_device()
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, classes)).to(device)


if __name__ == "__main__":
    print("training on", pick_device())
