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
    with open(path, "rb") as f:
        state = torch.load(f, map_location="cpu", weights_only=True)
    model = TinyNet().eval()
    model.to(device)
    missing, unexpected = model.load_state_dict(state, strict=True)
    return model
