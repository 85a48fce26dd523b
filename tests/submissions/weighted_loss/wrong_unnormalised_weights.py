# expect: has the wrong values
"""Moves the weights to the device but weights by 1/count and divides the weighted sum by the number of samples."""
import torch
from torch import nn


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    device = next(model.parameters()).device
    weight = 1.0 / torch.tensor(class_counts, dtype=torch.float32, device=device)
    criterion = nn.CrossEntropyLoss(weight=weight, reduction="sum")
    n = sum(len(y) for _, y in batches)
    return torch.stack([criterion(model(x), y) for x, y in batches]).sum() / n
