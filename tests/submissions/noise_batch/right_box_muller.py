"""Box-Muller from two uniform draws made on the device."""
import math

import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    u1 = torch.rand(batch_size, features, device=device).clamp_(min=1e-12)
    u2 = torch.rand(batch_size, features, device=device)
    return torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(2 * math.pi * u2)
