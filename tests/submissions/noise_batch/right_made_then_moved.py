import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    # Correct placement, though it pays for a host-to-device copy on every call.
    return torch.randn(batch_size, features).to(device)
