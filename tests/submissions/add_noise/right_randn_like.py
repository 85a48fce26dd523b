"""Draws noise shaped like x (its dtype and device too) from a generator made on x's device."""
import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    rng = torch.Generator(device=x.device)
    rng.manual_seed(seed)
    return x + torch.randn_like(x, generator=rng) * std
