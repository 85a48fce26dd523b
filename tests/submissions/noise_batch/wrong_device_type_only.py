# expect: pass device= to the function that creates it
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    # Drops the index: "cuda:1" becomes "cuda", which resolves to the current device (0).
    return torch.randn(batch_size, features, device=torch.device(device).type)
