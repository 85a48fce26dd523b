# expect: assign made
"""Batched, but computes the argmin with NumPy and copies it back."""
import torch


def assign(x, centroids):
    d = ((x[:, None, :] - centroids[None]) ** 2).sum(-1)
    return torch.from_numpy(d.cpu().numpy().argmin(axis=1)).to(x.device)
