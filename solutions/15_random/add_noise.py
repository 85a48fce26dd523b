"""Noise from the wrong generator: solution.

A generator belongs to one device type, and a draw on a device takes a generator of that device: make the
generator where x is.
"""

import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    generator = torch.Generator(device=x.device)
    generator.manual_seed(seed)
    noise = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
    return x + std * noise
