# expect: promises the accuracy as a Python float
"""Moves the batches, but returns the accuracy as a 0-dim tensor on the device instead of a Python float."""
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    total = 0
    for images, labels in batches:
        images, labels = images.to(device), labels.to(device)
        correct += (model(images).argmax(dim=1) == labels).sum()
        total += labels.numel()
    return correct / total
