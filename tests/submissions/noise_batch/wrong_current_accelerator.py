# expect: pass device= to the function that creates it
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Sends the noise to 'the' accelerator instead of the device it was asked for (its index is lost)."""
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    target = torch.accelerator.current_accelerator() if torch.device(device).type != "cpu" else "cpu"
    return torch.randn(batch_size, features).to(target)
