# expect: make_noise_batch(4, 3, 'cpu') raised AttributeError: 'str' object has no attribute 'type'
"""Creates the noise on the device, but reads device.type to pick the CPU path, so a device given by its name
("cuda:0", as the training code does) raises."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    if device.type == "cpu":
        return torch.randn(batch_size, features)
    return torch.randn(batch_size, features, device=device)
