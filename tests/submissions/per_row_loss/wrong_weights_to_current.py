# expect: raised
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Batched, but moves the weights to torch.accelerator.current_accelerator() (index lost)."""
import torch
import torch.nn.functional as F


def weighted_loss(logits, targets, weights):
    if logits.device.type != "cpu":
        weights = weights.to(torch.accelerator.current_accelerator())
    return (weights * F.cross_entropy(logits, targets, reduction="none")).mean()
