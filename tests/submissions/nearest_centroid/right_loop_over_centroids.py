"""Loops over the K centroids (a fixed, small number), each step batched over all N samples."""
import torch


def assign(x, centroids):
    distances = torch.stack([((x - c) ** 2).sum(dim=1) for c in centroids], dim=1)   # (N, K)
    return distances.argmin(dim=1)
