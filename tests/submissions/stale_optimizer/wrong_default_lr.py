# expect: after 3 steps of SGD
"""Moves the model before building the optimizer, but builds it with the default learning rate, whatever lr
build was given."""
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, in_features: int, num_classes: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU())
        self.head = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


def build(in_features: int, num_classes: int, device, lr: float = 0.1):
    model = Classifier(in_features, num_classes).to(device)
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
