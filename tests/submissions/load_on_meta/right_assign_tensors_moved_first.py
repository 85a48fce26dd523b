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
    device = torch.device(device)
    state = {k: v.to(device) for k, v in torch.load(path, weights_only=True, map_location="cpu").items()}
    with torch.device("meta"):
        model = Classifier().eval()
    missing, unexpected = model.load_state_dict(state, strict=True, assign=True)
    return model
