# expect: float64 features to
"""torch.tensor(features, device=device) keeps float64 for the copy, then .float() converts on the device."""
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.tensor(features, device=device).float()
    y = torch.tensor(labels, device=device)
    return x, y
