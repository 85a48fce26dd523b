import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    # Allocate on the device, then fill in place with standard-normal samples.
    return torch.empty(batch_size, features, device=device).normal_()
