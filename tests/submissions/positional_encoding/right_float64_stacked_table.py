"""Computes the table in float64 with interleaved sin/cos via stack+flatten, stores it as a float32 buffer."""
import math

import torch
from torch import nn


def sinusoidal_table(max_len: int, dim: int) -> torch.Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    angles = position * freq                                   # (max_len, dim // 2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1).float()


class AddPositions(nn.Module):
    def __init__(self, max_len: int, dim: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(max_len, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.add(x, self.table[: x.shape[1]])
