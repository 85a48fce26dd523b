"""Non-persistent buffer of allowed positions (tril), passed to scaled_dot_product_attention."""
import torch
import torch.nn.functional as F
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", torch.ones(max_len, max_len, dtype=torch.bool).tril(), persistent=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask[:T, :T])
