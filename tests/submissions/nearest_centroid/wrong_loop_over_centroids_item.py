# expect: reads of a
import torch


def assign(x, centroids):
    best = torch.full((x.shape[0],), float("inf"), device=x.device)
    out = torch.zeros(x.shape[0], dtype=torch.long, device=x.device)
    for k in range(centroids.shape[0]):
        d = ((x - centroids[k]) ** 2).sum(1)
        closer = d < best
        if closer.any():                      # skip centroids that win nowhere
            best = torch.where(closer, d, best)
            out = torch.where(closer, torch.full_like(out, k), out)
    return out
