# expect: float64 features to
"""Moves the float64 features first, then copy_()s them into a float32 device buffer."""
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    staged = torch.from_numpy(features).to(device)
    x = torch.empty(staged.shape, dtype=torch.float32, device=device).copy_(staged)
    return x, torch.from_numpy(labels).to(device)
