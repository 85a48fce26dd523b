"""Weights saved on someone else's GPU: solution.

torch.save records the device of every tensor, and torch.load restores each one there unless
map_location says otherwise. Loading onto the CPU first (map_location="cpu") works on every machine and
allocates nothing on the GPU that did the saving; load_state_dict then copies the values into the model
wherever it lives. weights_only=True (the default since PyTorch 2.6, written out here because the old
code switched it off) rebuilds only tensors and plain containers, so the file cannot run code.
"""

import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self, features: int = 8, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


def load_for_eval(path, device) -> TinyNet:
    state = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyNet().to(device)
    model.load_state_dict(state)
    return model.eval()
