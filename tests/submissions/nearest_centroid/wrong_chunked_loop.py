# expect: the work is done one sample at a time
import torch


def assign(x, centroids, chunk=8):
    parts = []
    for start in range(0, x.shape[0], chunk):
        xs = x[start:start + chunk]
        parts.append(((xs[:, None] - centroids[None]) ** 2).sum(-1).argmin(1))
    return torch.cat(parts)
