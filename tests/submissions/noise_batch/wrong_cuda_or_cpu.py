# expect: pass device= to the function that creates it
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    # Only trusts CUDA: on any other accelerator the noise stays on the CPU.
    target = device if torch.cuda.is_available() else "cpu"
    return torch.randn(batch_size, features, device=target)
