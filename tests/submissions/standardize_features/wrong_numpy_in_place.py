# expect: changed by NumPy code
"""Standardises with NumPy first, in place, then copies with torch.tensor: the copy comes too late, the
caller's array is already changed (on every device, not only on the CPU)."""
import numpy as np
import torch


def standardize(features, device):
    features -= features.mean(axis=0)
    features /= features.std(axis=0, ddof=1)
    return torch.tensor(features, dtype=torch.float32, device=device)
