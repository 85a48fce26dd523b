# expect: global random stream
"""Seeds the global generators instead of using one of its own."""
import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    torch.manual_seed(seed)
    return x + std * torch.randn(x.shape, dtype=x.dtype, device=x.device)
