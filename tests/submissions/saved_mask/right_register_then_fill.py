"""Declares the non-persistent buffer first, then assigns it (assignment keeps a registered name a buffer)."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", None, persistent=False)
        self.mask = ~torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(x.shape[-1])
        return F.softmax(scores.masked_fill(self.mask[:T, :T], float("-inf")), dim=-1) @ v
