"""torch.asarray with dtype=float32 and device=, labels via from_numpy(...).to(device=...)."""
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.asarray(features, dtype=torch.float32, device=device)
    y = torch.from_numpy(labels).to(device=device)
    return x, y
