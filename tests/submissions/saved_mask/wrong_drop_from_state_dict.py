# expect: It still expects every persistent buffer
"""Removes the mask from state_dict() by hand; load_state_dict still expects it, as it is persistent."""

import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", torch.ones(max_len, max_len, dtype=torch.bool).triu(diagonal=1))

    def state_dict(self, *args, **kwargs):
        sd = super().state_dict(*args, **kwargs)
        sd.pop("mask", None)
        return sd

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        return scores.softmax(dim=-1) @ v
