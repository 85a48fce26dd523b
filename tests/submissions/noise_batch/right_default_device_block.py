import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    # Factory calls inside the block default to `device`.
    with torch.device(device):
        return torch.randn(batch_size, features)
