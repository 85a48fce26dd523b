"""A k-means history in which every step looks the same.

kmeans(points, k, steps) clusters points with Lloyd's algorithm and records where the centroids were
after each step, as NumPy arrays, for an animation drawn with matplotlib.

    points   float tensor (N, D) on some device
    k        number of clusters; the first k points are the initial centroids
    steps    number of update steps
    returns  a list of `steps` NumPy arrays (k, D) of the points' dtype: the centroids after step 1, 2, ...

On the GPU workstation the animation shows the centroids moving. On a laptop every frame shows the
final centroids. Fix the recording so that each entry is the state after its own step, on any device.

Check your fix with:  devcourse check centroid_history
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
        history.append(centroids.cpu().numpy())
    return history
