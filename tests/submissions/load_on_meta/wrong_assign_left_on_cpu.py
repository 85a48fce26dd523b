# expect: with assign=True the model keeps the checkpoint's tensors where they are
# on the cpu leg: passes (the tensors are where they belong)
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
    state = torch.load(path, map_location="cpu", weights_only=True)
    with torch.device("meta"):
        model = Classifier()
    model.load_state_dict(state, assign=True)
    return model.eval()
