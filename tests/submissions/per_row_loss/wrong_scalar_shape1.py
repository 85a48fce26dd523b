# expect: shape
"""Batched, but returns a (1,)-shaped tensor."""
import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    return (weights * F.cross_entropy(logits, targets, reduction="none")).mean().reshape(1)
