# expect: train_step should return the loss of the batch
"""Moves the model before building the optimizer, but shortened train_step and lost the loss it returns."""
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
    return model, torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
