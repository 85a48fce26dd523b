# expect: gave other noise the second time
"""Drops the generator to silence the error."""
import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    return x + std * torch.randn_like(x)
