# expect: is still float64
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    dtype = torch.float32 if torch.device(device).type == "mps" else None
    x = torch.from_numpy(features).to(device, dtype=dtype)
    y = torch.from_numpy(labels).to(device)
    return x, y
