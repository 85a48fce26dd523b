import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    where = next(model.parameters()).device
    correct = torch.zeros((), dtype=torch.int64, device=where)
    total = 0
    for images, labels in batches:
        images, labels = images.to(where), labels.to(where)
        correct += (model(images).argmax(dim=1) == labels).sum()
        total += labels.numel()
    return correct.item() / total
