# expect: evaluate returned an accuracy of
"""Moves batches correctly but averages per-batch accuracies, although batch sizes differ."""
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    accuracies = []
    for images, labels in batches:
        images, labels = images.to(device), labels.to(device)
        accuracies.append((model(images).argmax(dim=1) == labels).float().mean())
    return torch.stack(accuracies).mean().item()
