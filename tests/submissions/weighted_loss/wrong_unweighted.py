# expect: has the wrong values
import torch
from torch import nn


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    criterion = nn.CrossEntropyLoss()          # no weights, no mismatch
    return torch.stack([criterion(model(x), y) for x, y in batches]).mean()
