# expect: wrong values
"""Uses reduction='sum' on the weighted losses (the sum, not the mean)."""
import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    return (weights * F.cross_entropy(logits, targets, reduction="none")).sum()
