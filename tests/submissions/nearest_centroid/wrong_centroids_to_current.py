# expect: raised
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Batched, but moves the centroids to the 'current accelerator' first, losing the input's index."""
import torch


def assign(x, centroids):
    if torch.accelerator.is_available() and x.device.type != "cpu":
        centroids = centroids.to(torch.accelerator.current_accelerator())
    return ((x[:, None, :] - centroids[None]) ** 2).sum(-1).argmin(dim=1)
