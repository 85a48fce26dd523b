# expect: ran in training mode
"""Moves the criterion to the model's device, but dropped model.eval(): the model's dropout stays on."""
import torch
from torch import nn


def make_criterion(class_counts) -> nn.Module:
    counts = torch.tensor(class_counts, dtype=torch.float32)
    return nn.CrossEntropyLoss(weight=counts.sum() / (len(counts) * counts))


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    criterion = make_criterion(class_counts).to(next(model.parameters()).device)
    return torch.stack([criterion(model(x), y) for x, y in batches]).mean()
