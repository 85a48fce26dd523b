"""Noise from the wrong generator.

add_noise(x, seed, std=0.1) returns x plus Gaussian noise of standard deviation `std`, for data
augmentation that can be replayed: the noise comes from a generator of its own, seeded with `seed`, so the
same x and the same seed give the same result on every call, different seeds different noise, and the
global random streams (torch.manual_seed's) are left as they were.

    x        float tensor of any shape, on the CPU or an accelerator (float32, float64, float16, bfloat16)
    seed     int
    returns  a tensor like x (same shape, dtype and device)

The batches are large: the noise is drawn on x's own device, not drawn on the CPU and copied over. On the
CPU the function works; given a tensor on a GPU it fails. Fix it so it works on any device.

Check your fix with:  devcourse check add_noise
"""

import torch


def add_noise(x: torch.Tensor, seed: int, std: float = 0.1) -> torch.Tensor:
    generator = torch.Generator()
    generator.manual_seed(seed)
    noise = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
    return x + std * noise
