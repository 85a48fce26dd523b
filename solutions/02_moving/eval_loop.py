"""Batches moved to the device, yet still on the CPU: solution.

Tensor.to() never changes the tensor it is called on: it returns a new tensor on the target device (or
the same one when nothing has to change). `images.to(device)` on a line of its own made that copy and
threw it away, so the model met the CPU batch. Rebind the names to the moved tensors. (Modules are
different: model.to(device) moves the model in place.)
"""

import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    total = 0
    for images, labels in batches:
        images = images.to(device)
        labels = labels.to(device)
        predictions = model(images).argmax(dim=1)
        correct += (predictions == labels).sum()
        total += labels.numel()
    return correct.item() / total
