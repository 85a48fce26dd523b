# expect: the noise should be standard normal
"""Adds two standard-normal draws "for more randomness": the sum's std is 1.41, not 1."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    return torch.randn(batch_size, features, device=device) + torch.randn(batch_size, features, device=device)
