# expect: should be on sim:1
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Moves first, then builds, but moves to torch.device(device).type (the current device)."""
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU())
        self.head = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()


def build(in_features, num_classes, device, lr=0.1):
    model = Classifier(in_features, num_classes).to(torch.device(device).type)
    return model, torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
