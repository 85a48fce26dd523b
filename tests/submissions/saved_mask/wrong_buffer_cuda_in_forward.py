# expect: raised
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
"""Non-persistent buffer, but forward moves the sliced mask with .cuda() 'to be safe'."""
import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", torch.ones(max_len, max_len, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        mask = self.mask[:T, :T].cuda() if x.is_cuda or x.device.type != "cpu" else self.mask[:T, :T]
        return scores.masked_fill(mask, float("-inf")).softmax(dim=-1) @ v
