# expect: are not in the optimizer
"""Moves with .to(device) but builds the optimizer from a deep copy of the model made before."""
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

import copy


def build(in_features, num_classes, device, lr=0.1):
    model = Classifier(in_features, num_classes)
    shadow = copy.deepcopy(model).to(device)
    optimizer = torch.optim.SGD(shadow.parameters(), lr=lr, momentum=0.9)
    return model.to(device), optimizer
