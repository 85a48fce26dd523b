import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    correct, total = 0, 0
    moved = ((x.to(device), y.to(device)) for x, y in batches)
    for images, labels in moved:
        correct += int((model(images).argmax(dim=1) == labels).sum())
        total += len(labels)
    return correct / total
