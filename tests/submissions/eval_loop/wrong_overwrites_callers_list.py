# expect: changed the caller's list
"""Moves each batch 'once and for all' by writing the moved tensors back into the caller's list."""
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    correct, total = 0, 0
    for i, (images, labels) in enumerate(batches):
        batches[i] = images, labels = images.to(device), labels.to(device)
        correct += int((model(images).argmax(dim=1) == labels).sum())
        total += labels.numel()
    return correct / total
