# expect: raised
# on cuda: passes (on cuda:1 alone: 'cuda' is cuda:0 there, which neither saved nor receives the checkpoint; the simulator stands for any other accelerator, where it fails)
"""Hard-codes map_location='cuda', which fails on machines without CUDA."""
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
    state = torch.load(path, map_location="cuda", weights_only=True)
    model = TinyNet().to(device)
    model.load_state_dict(state)
    return model.eval()
