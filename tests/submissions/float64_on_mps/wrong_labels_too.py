# expect: must stay int64
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features).to(device, torch.float32)
    y = torch.from_numpy(labels).to(device, torch.float32)
    return x, y
