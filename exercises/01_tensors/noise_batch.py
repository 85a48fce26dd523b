"""A batch born on the wrong device.

make_noise_batch(batch_size, features, device) should return a float32 tensor of shape
(batch_size, features) filled with standard-normal noise, living on `device`. Training code calls it
with the model's device, e.g. "cuda:0", and adds the result to a batch that is already there.

It works on a laptop and fails on the GPU server. Fix it without changing what it returns on the CPU.

Check your fix with:  devcourse check noise_batch
"""

import torch


def make_noise_batch(batch_size: int, features: int, device) -> torch.Tensor:
    noise = torch.randn(batch_size, features)
    return noise
