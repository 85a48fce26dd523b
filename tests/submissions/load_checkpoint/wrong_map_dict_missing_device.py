# expect: did not cover this checkpoint
# on cuda: passes (on cuda:0, which the dict names; the simulator's devices stand for any device it does not name)
"""Maps with a dict that names the first GPU only: a checkpoint saved on any other device is restored where it
was saved (issue 27: the message said "pass map_location")."""
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
    state = torch.load(path, map_location={"cuda:0": "cpu"}, weights_only=True)
    model = TinyNet()
    model.load_state_dict(state)
    return model.to(device).eval()
