"""A batch born on the wrong device: solution.

torch.randn allocates on the CPU unless told otherwise. Creating the tensor directly on `device` is both
correct and cheaper than creating it on the CPU and copying it over with .to(device).
"""

import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    noise = torch.randn(batch_size, features, device=device)
    return noise
