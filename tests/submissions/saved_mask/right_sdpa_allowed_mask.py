"""Keeps the *allowed* positions as a non-persistent buffer and lets scaled_dot_product_attention apply it."""
import torch
import torch.nn.functional as F
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim: int, max_len: int):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        allowed = torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))
        self.register_buffer("mask", ~allowed, persistent=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=~self.mask[:T, :T])
