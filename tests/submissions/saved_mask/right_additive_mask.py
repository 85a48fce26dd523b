"""An additive float mask (-inf above the diagonal), registered as a non-persistent buffer."""

import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", torch.full((max_len, max_len), float("-inf")).triu(1), persistent=False)

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D) + self.mask[:T, :T]
        return torch.softmax(scores, dim=-1) @ v
