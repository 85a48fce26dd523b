"""Maps straight onto torch.device(device) and builds the model there."""
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
    device = torch.device(device)
    state = torch.load(path, map_location=device, weights_only=True)
    model = TinyNet().to(device=device)
    model.load_state_dict(state)
    model.eval()
    return model
