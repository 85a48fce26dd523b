# expect: changed the caller's batches
"""Makes the move 'stick' by assigning .data, which moves the caller's own tensors."""
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    total = 0
    for images, labels in batches:
        images.data = images.data.to(device)
        labels.data = labels.data.to(device)
        correct += (model(images).argmax(dim=1) == labels).sum()
        total += labels.numel()
    return correct.item() / total
