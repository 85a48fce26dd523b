"""Allocates a float32 tensor on the device and copy_()s the float64 CPU features into it."""
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.empty(features.shape, dtype=torch.float32, device=device)
    x.copy_(torch.from_numpy(features))
    y = torch.from_numpy(labels).to(device)
    return x, y
