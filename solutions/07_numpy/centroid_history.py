"""A k-means history: the reference fix.

On the CPU, centroids.cpu() returns the same tensor and .numpy() wraps its memory without a copy, so every
entry of the history is a view of the one centroid tensor, which copy_ overwrites at each step: all frames
show the last state. On a GPU .cpu() copies, which hides the bug. .copy() makes each frame a snapshot of
its own on every device.
"""

import numpy as np
import torch


def kmeans(points: torch.Tensor, k: int, steps: int) -> list[np.ndarray]:
    centroids = points[:k].clone()
    history = []
    for _ in range(steps):
        assign = torch.cdist(points, centroids).argmin(dim=1)              # (N,) nearest centroid
        sums = torch.zeros_like(centroids).index_add_(0, assign, points)
        counts = torch.bincount(assign, minlength=k).clamp(min=1)
        centroids.copy_(sums / counts[:, None].to(points.dtype))          # update in place
        history.append(centroids.cpu().numpy().copy())
    return history
