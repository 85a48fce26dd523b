# expect: drawn on the CPU and copied over
# on the cpu leg: passes (there is nothing to copy)
"""Keeps the CPU generator and moves the noise: replayable, but every batch's noise crosses from the CPU."""
import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    noise = torch.randn(x.shape, generator=g, dtype=x.dtype)
    return x + std * noise.to(x.device)
