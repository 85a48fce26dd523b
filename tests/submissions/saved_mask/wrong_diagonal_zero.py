# expect: the wrong values
"""Non-persistent, but the mask forbids the diagonal too: the first position attends to nothing."""
import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", torch.ones(max_len, max_len, dtype=torch.bool).triu(), persistent=False)

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        return scores.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1) @ v
