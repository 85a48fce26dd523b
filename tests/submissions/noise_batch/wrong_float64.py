# expect: should be float32
"""Noise on the device, but drawn in float64 'for precision'."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    return torch.randn(batch_size, features, device=device, dtype=torch.float64)
