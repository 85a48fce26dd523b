# expect: the model takes float32
"""Computes in float64 for accuracy and forgets to convert back to float32."""
import torch


def standardize(features, device):
    x = torch.from_numpy(features).to(device, torch.float64)
    return (x - x.mean(0)) / x.std(0)
