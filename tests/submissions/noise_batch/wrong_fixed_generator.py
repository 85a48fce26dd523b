# expect: returned the same numbers
"""A per-call device generator with a fixed seed: the same batch every call."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    gen = torch.Generator(device=device).manual_seed(1234)
    return torch.randn(batch_size, features, generator=gen, device=device)
