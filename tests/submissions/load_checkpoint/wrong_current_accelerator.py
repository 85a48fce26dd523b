# expect: the device that saved it
"""Maps onto the current accelerator (the first GPU), piling every checkpoint onto it whatever device is asked."""
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
    where = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
    state = torch.load(path, map_location=where, weights_only=True)
    model = TinyNet().to(device)
    model.load_state_dict(state)
    return model.eval()
