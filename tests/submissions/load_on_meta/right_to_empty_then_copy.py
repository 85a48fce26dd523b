"""Gives the model memory on the device first (to_empty), then copies the checkpoint into it."""
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
    with torch.device("meta"):
        model = Classifier()
    model.to_empty(device=device)
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    model.eval()
    return model
