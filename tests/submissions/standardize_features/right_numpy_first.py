import numpy as np
import torch


def standardize(features, device):
    f = features.astype(np.float64)
    z = (f - f.mean(axis=0)) / f.std(axis=0, ddof=1)
    return torch.as_tensor(z, dtype=torch.float32, device=device)
