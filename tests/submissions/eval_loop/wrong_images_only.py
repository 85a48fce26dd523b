# expect: x.to(device) returns a new tensor
import torch
from torch import nn


@torch.no_grad()
def evaluate(model: nn.Module, batches, device) -> float:
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    total = 0
    for images, labels in batches:
        images = images.to(device)
        labels.to(device)
        predictions = model(images).argmax(dim=1)
        correct += (predictions == labels).sum()
        total += labels.numel()
    return correct.item() / total
