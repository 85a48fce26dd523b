"""Capstone of "Where tensors live": a classifier that only ever trained on a laptop.

Standardized(features, classes, mean, std) is a linear classifier that standardizes its input with the
training set's mean and std. Both statistics belong to the model: they are saved in its state_dict with the
weights (as "mean" and "std") and move with it when it is moved.

fit(x, y, steps, device) trains one and returns (model, final_loss):

    - x: float32 features [n, features] and y: int64 labels [n], both CPU tensors; every class 0..C-1
      appears in y, where C = y.max() + 1
    - the model is built on the CPU from x.mean(0) and x.std(0), then moved to `device` (any device:
      "cpu", "cuda:1", "mps"...), where every step of training runs
    - each class is weighted by n / (C * count of that class), for F.cross_entropy(logits, y, weight=...)
    - `steps` full-batch steps of torch.optim.SGD(model.parameters(), lr=0.5)
    - it returns the trained model, on `device`, and the loss of the last step as a Python float, the only
      value Python reads from the device

It was written on a laptop, where it trains. It has three bugs of the chapters of this part: the model's
statistics are not part of it (they neither move nor save), one tensor never reaches the device, and one is
made on the CPU while everything it meets is on the device. Fix them; every device must train the model the
CPU trains.

Check your fix with:  devcourse check fit_standardized
"""

import torch
import torch.nn.functional as F
from torch import nn


class Standardized(nn.Module):
    def __init__(self, features: int, classes: int, mean: torch.Tensor, std: torch.Tensor):
        super().__init__()
        self.linear = nn.Linear(features, classes)
        self.mean = mean
        self.std = std

    def forward(self, x):
        return self.linear((x - self.mean) / self.std)


def class_weights(y: torch.Tensor, classes: int) -> torch.Tensor:
    counts = torch.zeros(classes).index_add_(0, y, torch.ones(len(y)))
    return len(y) / (classes * counts)


def fit(x: torch.Tensor, y: torch.Tensor, steps: int, device):
    classes = int(y.max()) + 1
    model = Standardized(x.shape[1], classes, x.mean(0), x.std(0))
    model.to(device)
    x.to(device)
    y = y.to(device)
    weights = class_weights(y, classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y, weight=weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, loss.item()
