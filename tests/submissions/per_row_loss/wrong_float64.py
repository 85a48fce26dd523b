# expect: float64
"""Computes the loss in float64 for accuracy (float64 does not exist on MPS), returning a double."""
import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    per_row = F.cross_entropy(logits.double(), targets, reduction="none")
    return (weights.double() * per_row).mean()
