import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features.astype(np.float32)).to(device)
    y = torch.from_numpy(labels).to(device)
    return x, y
