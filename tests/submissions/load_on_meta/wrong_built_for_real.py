# expect: drew random numbers
"""Drops meta: builds the model on the device (random weights first), then loads."""
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features: int = 12, hidden: int = 48, classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def load_classifier(path, device) -> Classifier:
    with torch.device(device):
        model = Classifier()
    model.load_state_dict(torch.load(path, map_location=device, weights_only=True))
    return model.eval()
