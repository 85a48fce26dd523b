# expect: pass device= to the function that creates it
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    # Only trusts CUDA: on any other accelerator the noise stays on the CPU.
    target = device if torch.cuda.is_available() else "cpu"
    return torch.randn(batch_size, features, device=target)
