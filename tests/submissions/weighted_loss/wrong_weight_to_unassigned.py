# expect: move the loss to the model's device
"""Calls criterion.weight.to(device) without using the result, so the weights stay on the CPU."""
import torch
from torch import nn


def make_criterion(class_counts) -> nn.Module:
    counts = torch.tensor(class_counts, dtype=torch.float32)
    return nn.CrossEntropyLoss(weight=counts.sum() / (len(counts) * counts))


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    criterion = make_criterion(class_counts)
    criterion.weight.to(next(model.parameters()).device)
    return torch.stack([criterion(model(x), y) for x, y in batches]).mean()
