# expect: not a registered buffer
"""Keeps the mask out of state_dict by storing it in a plain list, moved to x's device on each call."""
import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self._masks = [torch.ones(max_len, max_len, dtype=torch.bool).triu(diagonal=1)]

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        scores = scores.masked_fill(self._masks[0][:T, :T].to(x.device), float("-inf"))
        return scores.softmax(dim=-1) @ v
