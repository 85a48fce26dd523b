# expect: copies from
"""Keeps the loop but runs it on the CPU, so the device sees no per-row work; the result is moved back."""

import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    device = logits.device
    logits, targets, weights = logits.cpu(), targets.cpu(), weights.cpu()
    total = torch.zeros((), dtype=logits.dtype)
    for i in range(logits.shape[0]):
        total = total + weights[i] * F.cross_entropy(logits[i : i + 1], targets[i : i + 1])
    return (total / logits.shape[0]).to(device)
