"""unsqueeze + pow + sum, and min(...).indices."""
import torch


def assign(x, centroids):
    diff = x.unsqueeze(1) - centroids.unsqueeze(0)      # (N, K, D)
    return diff.pow(2).sum(dim=2).min(dim=1).indices
