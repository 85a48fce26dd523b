# expect: but it should be on
"""Maps the tensors to the device but loads them into a CPU model, which load_state_dict copies back to the CPU."""
import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self, features: int = 8, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


def load_for_eval(path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model = TinyNet()
    model.load_state_dict(state)
    return model.eval()
