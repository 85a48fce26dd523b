"""float32 features in one .to(); labels cross as int32 (half the bytes) and are widened to int64 on the device."""
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features).to(device, torch.float32)
    y = torch.from_numpy(labels.astype(np.int32)).to(device).long()
    return x, y
