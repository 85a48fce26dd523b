"""Draws x + std * N(0, 1) in one call: torch.normal with x as the mean."""
import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    g = torch.Generator(device=x.device)
    g.manual_seed(seed)
    return torch.normal(x, std, generator=g)
