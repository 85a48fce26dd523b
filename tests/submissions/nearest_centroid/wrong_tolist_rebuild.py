# expect: to the CPU
"""Batched distances, but the answer goes through a Python list and back to the device."""
import torch


def assign(x, centroids):
    distances = torch.cdist(x, centroids)
    return torch.tensor(distances.argmin(dim=1).tolist(), device=x.device)
