# expect: wrong values
"""Passes the per-example weights as cross_entropy's weight=, which weights classes, not rows."""

import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    class_weights = torch.ones(logits.shape[1], device=logits.device)
    class_weights[: min(len(weights), logits.shape[1])] = weights[: logits.shape[1]]
    return F.cross_entropy(logits, targets, weight=class_weights)
