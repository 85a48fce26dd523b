# expect: made 
"""Moves the criterion but sums the losses as Python floats with .item() and rebuilds a tensor at the end."""
import torch
from torch import nn


def make_criterion(class_counts) -> nn.Module:
    counts = torch.tensor(class_counts, dtype=torch.float32)
    return nn.CrossEntropyLoss(weight=counts.sum() / (len(counts) * counts))


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    device = next(model.parameters()).device
    criterion = make_criterion(class_counts).to(device)
    total = sum(criterion(model(x), y).item() for x, y in batches)
    return torch.tensor(total / len(batches), device=device)
