# expect: the wrong values
"""Batched, but divides by the sum of the weights instead of the batch size."""
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    per_row = F.cross_entropy(logits, targets, reduction="none")
    return (weights * per_row).sum() / weights.sum()
