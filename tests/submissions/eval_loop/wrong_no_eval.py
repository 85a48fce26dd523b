# expect: ran in training mode
"""Moves the batches, but lost the model.eval() while rewriting the loop: dropout and batch norm run as in training."""
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    correct, total = 0, 0
    for images, labels in batches:
        images, labels = images.to(device), labels.to(device)
        correct += int((model(images).argmax(dim=1) == labels).sum())
        total += labels.numel()
    return correct / total
