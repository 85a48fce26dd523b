# expect: float64 features to
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features).to(device).float()
    y = torch.from_numpy(labels).to(device)
    return x, y
