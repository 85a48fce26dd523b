import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    gen = torch.Generator(x.device).manual_seed(seed)
    noise = torch.empty_like(x).normal_(mean=0.0, std=std, generator=gen)
    return x + noise
