# expect: make_noise_batch(4, 3, torch.device('cpu')) raised AttributeError
"""Treats the device as the string the training code passes ("cuda:0"), so a torch.device raises."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    if device.startswith("cuda"):
        return torch.randn(batch_size, features, device=device)
    return torch.randn(batch_size, features)
