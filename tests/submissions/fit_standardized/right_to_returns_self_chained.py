"""A right fix written in one expression: the module is built, moved and kept in one line; the data move with
assignment; the counts are made like the labels (new_zeros/new_ones)."""

import torch
import torch.nn.functional as F
from torch import nn


class Standardized(nn.Module):
    def __init__(self, features: int, classes: int, mean: torch.Tensor, std: torch.Tensor):
        super().__init__()
        self.linear = nn.Linear(features, classes)
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return self.linear((x - self.mean) / self.std)


def class_weights(y: torch.Tensor, classes: int) -> torch.Tensor:
    counts = y.new_zeros(classes, dtype=torch.float32).index_add_(0, y, y.new_ones(len(y), dtype=torch.float32))
    return len(y) / (classes * counts)


def fit(x: torch.Tensor, y: torch.Tensor, steps: int, device):
    classes = int(y.max()) + 1
    model = Standardized(x.shape[1], classes, x.mean(0), x.std(0)).to(device)
    x, y = x.to(device), y.to(device)
    weights = class_weights(y, classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y, weight=weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, loss.item()
