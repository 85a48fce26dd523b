"""An optimizer that trains the old parameters.

build(in_features, num_classes, device, lr) makes a small classifier on `device` and its optimizer (SGD with
momentum 0.9); train_step(model, optimizer, x, y) runs one step of training on a batch already on `device`
and returns the loss.

On the CPU the model learns. On a GPU it never does: the loss stays where it started, with no error. The
helper move_parameters puts each weight on the device by wrapping a moved copy in a new nn.Parameter, after
the optimizer was built, so the optimizer keeps updating the old CPU tensors, which the model no longer
uses. Fix it so that the optimizer updates the parameters the model actually has, on any device.

Check your fix with:  devcourse check stale_optimizer
"""

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


def move_parameters(module: nn.Module, device) -> None:
    """Put every parameter of `module` on `device` (those already there are left alone)."""
    device = torch.device(device)
    for sub in module.modules():
        for name, param in list(sub.named_parameters(recurse=False)):
            if param.device != device:
                setattr(sub, name, nn.Parameter(param.detach().to(device)))


def build(in_features: int, num_classes: int, device, lr: float = 0.1):
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
