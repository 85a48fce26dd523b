"""torch.normal with a size and device= draws the standard-normal batch on the device."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    return torch.normal(0.0, 1.0, size=(batch_size, features), device=torch.device(device))
