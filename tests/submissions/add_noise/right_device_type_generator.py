"""Makes the generator for x's device type only: any generator of that type may drive the draw."""
import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    g = torch.Generator(device=x.device.type)
    g.manual_seed(seed)
    return x + std * torch.randn(x.shape, generator=g, dtype=x.dtype, device=x.device)
