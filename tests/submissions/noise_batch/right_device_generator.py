"""A generator on the device, freshly seeded each call, drives torch.randn there."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    gen = torch.Generator(device=device)
    gen.seed()
    return torch.randn(batch_size, features, generator=gen, device=device)
