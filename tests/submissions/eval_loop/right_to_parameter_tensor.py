"""Moves images with .to(other_tensor) (a parameter of the model) and labels with .to(device=...); counts on the device."""
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    weight = next(model.parameters())
    hits = torch.zeros((), dtype=torch.int64, device=device)
    count = 0
    for images, labels in batches:
        images = images.to(weight)                  # same device and dtype as the weights
        labels = labels.to(device=device)
        hits.add_(model(images).argmax(1).eq(labels).sum())
        count += labels.shape[0]
    return hits.item() / count
