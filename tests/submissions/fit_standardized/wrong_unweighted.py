# expect: training as the docstring says gives
"""Wrong: the device error of the class weights is "fixed" by dropping them from the loss."""

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
    counts = torch.zeros(classes, device=y.device).index_add_(0, y, torch.ones(len(y), device=y.device))
    return len(y) / (classes * counts)


def fit(x: torch.Tensor, y: torch.Tensor, steps: int, device):
    classes = int(y.max()) + 1
    model = Standardized(x.shape[1], classes, x.mean(0), x.std(0))
    model.to(device)
    x = x.to(device)
    y = y.to(device)
    weights = class_weights(y, classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, loss.item()
