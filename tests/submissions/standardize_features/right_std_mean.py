"""Computes out of place with torch.std_mean on the device."""
import torch


def standardize(features, device):
    x = torch.from_numpy(features).to(device=torch.device(device), dtype=torch.float32)
    std, mean = torch.std_mean(x, dim=0)
    return (x - mean) / std
