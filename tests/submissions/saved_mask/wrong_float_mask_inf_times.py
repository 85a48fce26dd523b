# expect: wrong values
"""Non-persistent float mask of 0/1, multiplied into the scores instead of filling -inf."""
import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", torch.ones(max_len, max_len).tril(), persistent=False)

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        return (scores * self.mask[:T, :T]).softmax(dim=-1) @ v
