"""An nn.CrossEntropyLoss module with reduction='none', weighted with torch.dot."""
import torch
from torch import nn

_per_row = nn.CrossEntropyLoss(reduction="none")


def weighted_loss(logits, targets, weights):
    return torch.dot(_per_row(logits, targets), weights.to(logits.dtype)) / targets.numel()
