import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.as_tensor(features, dtype=torch.float32, device=device)
    y = torch.as_tensor(labels, device=device)
    return x, y
