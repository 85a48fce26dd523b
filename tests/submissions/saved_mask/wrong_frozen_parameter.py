# expect: persistent=False
"""Turns the mask into a frozen parameter: still saved, and now seen by the optimizer too."""

import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.mask = nn.Parameter(torch.ones(max_len, max_len).triu(diagonal=1), requires_grad=False)

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        scores = scores.masked_fill(self.mask[:T, :T].bool(), float("-inf"))
        return scores.softmax(dim=-1) @ v
