# expect: shows the final centroids
"""Believes slicing [:] makes a copy; it is still a view of the centroid tensor."""
import numpy as np
import torch


def kmeans(points, k, steps):
    centroids = points[:k].clone()
    history = []
    for _ in range(steps):
        assign = torch.cdist(points, centroids).argmin(dim=1)
        sums = torch.zeros_like(centroids).index_add_(0, assign, points)
        counts = torch.bincount(assign, minlength=k).clamp(min=1)
        centroids.copy_(sums / counts[:, None].to(points.dtype))
        history.append(centroids.cpu().numpy()[:])
    return history
