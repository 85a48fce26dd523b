"""A mask saved with every checkpoint.

CausalAttention(dim, max_len) is a single-head causal self-attention layer: on a batch (B, T, dim) with
T <= max_len, position t attends to positions 0..t only. The boolean mask of forbidden positions depends on
nothing but max_len, so it is built once in __init__ and sliced in forward.

The layer trains fine, but its checkpoints are wrong. The mask is registered as an ordinary (persistent)
buffer, so state_dict() saves a max_len x max_len mask next to the weights, and a checkpoint trained with
max_len=128 cannot be loaded into a layer built with max_len=512 to run longer sequences:
load_state_dict fails with "size mismatch for mask". Fix it so that checkpoints hold the weights only,
while the mask still moves with model.to(device) as a buffer.

Check your fix with:  devcourse check saved_mask
"""

import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, dim: int, max_len: int):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        forbidden = torch.ones(max_len, max_len, dtype=torch.bool).triu(diagonal=1)
        self.register_buffer("mask", forbidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T, D = x.shape[1], x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        return scores.softmax(dim=-1) @ v
