"""A mask saved with every checkpoint: solution.

persistent=False keeps the mask a buffer (model.to(device) moves it, model.half() would leave it boolean)
but leaves it out of state_dict(): __init__ rebuilds it from max_len, so a checkpoint only needs the
weights, and it loads into a layer built for any max_len.
"""

import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim: int, max_len: int):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        forbidden = torch.ones(max_len, max_len, dtype=torch.bool).triu(diagonal=1)
        self.register_buffer("mask", forbidden, persistent=False)      # moved with the model, never saved

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        return scores.softmax(dim=-1) @ v
