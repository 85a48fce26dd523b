"""Keeps move_parameters but makes it move in place with torch.utils.swap_tensors: the optimizer's
references stay the model's parameters."""
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


def move_parameters(module, device):
    device = torch.device(device)
    for param in module.parameters():
        if param.device != device:
            torch.utils.swap_tensors(param, nn.Parameter(param.detach().to(device)))


def build(in_features, num_classes, device, lr=0.1):
    model = Classifier(in_features, num_classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    move_parameters(model, device)
    return model, optimizer


def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()
