# expect: did not cover this checkpoint
# on one gpu: passes (only the check of two devices, saved on the first and loaded onto the second, shows it)
"""Maps to the device's type, 'sim' or 'cuda': that is the current device, the first one, where a checkpoint saved
on the first device of a node stays. The message must not say "pass map_location" when it was passed (issue 27)."""
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
    state = torch.load(path, map_location=torch.device(torch.device(device).type), weights_only=True)
    model = TinyNet()
    model.load_state_dict(state)
    return model.to(device).eval()
