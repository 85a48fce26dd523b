# expect: shape
"""Keeps the default mean reduction and multiplies the mean by the weights."""
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    return weights * F.cross_entropy(logits, targets)
