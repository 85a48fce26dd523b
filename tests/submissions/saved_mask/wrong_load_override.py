# expect: persistent=False
"""Leaves the mask persistent and makes load_state_dict drop it from incoming checkpoints."""
import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("mask", torch.ones(max_len, max_len, dtype=torch.bool).triu(diagonal=1))

    def load_state_dict(self, state_dict, strict=True, assign=False):
        state_dict = {k: v for k, v in state_dict.items() if k != "mask"}
        state_dict["mask"] = self.mask
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def forward(self, x):
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        return scores.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1) @ v
