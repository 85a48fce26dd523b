# expect: not connected to the logits
"""Batched, but returns the value re-wrapped in a new tensor (read with .item())."""
import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    per_row = F.cross_entropy(logits, targets, reduction="none")
    value = (weights * per_row).mean().item()
    return torch.tensor(value, device=logits.device)
