import torch


def assign(x: torch.Tensor, centroids: torch.Tensor) -> torch.Tensor:
    # |x - c|^2 = |x|^2 - 2 x.c + |c|^2; |x|^2 is the same for every centroid of a row, so it can be dropped
    scores = centroids.square().sum(dim=1)[None, :] - 2 * x @ centroids.T
    return torch.argmin(scores, dim=1)
