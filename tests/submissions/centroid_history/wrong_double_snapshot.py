# expect: but the points are float32
"""Snapshots with .double() "for the plot's precision": a copy, but float32 points give float64 frames."""
import torch


def kmeans(points, k, steps):
    centroids = points[:k].clone()
    history = []
    for _ in range(steps):
        assign = torch.cdist(points, centroids).argmin(dim=1)
        sums = torch.zeros_like(centroids).index_add_(0, assign, points)
        counts = torch.bincount(assign, minlength=k).clamp(min=1)
        centroids.copy_(sums / counts[:, None].to(points.dtype))
        history.append(centroids.double().cpu().numpy())
    return history
