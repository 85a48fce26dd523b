# expect: the work grows with the batch
"""Batched losses, but the weighting is still a Python loop over the rows."""

import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    losses = F.cross_entropy(logits, targets, reduction="none")
    total = 0
    for w, l in zip(weights, losses):
        total = total + w * l
    return total / len(losses)
