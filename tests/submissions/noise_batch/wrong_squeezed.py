# expect: make_noise_batch(1, 1) should be float32 of shape (1, 1)
"""Squeezes the batch out of habit: right for most sizes, but a batch of one feature loses its dimensions."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    return torch.randn(batch_size, features, device=device).squeeze()
