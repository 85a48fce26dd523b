import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features).float().to(device, non_blocking=True)
    return x, torch.tensor(labels, device=device)
