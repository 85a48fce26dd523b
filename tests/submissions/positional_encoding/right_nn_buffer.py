"""Stores the table with nn.Buffer, the assignment form of register_buffer."""
import math

import torch
from torch import nn


def sinusoidal_table(max_len: int, dim: int) -> torch.Tensor:
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(max_len, dim)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq)
    return table


class AddPositions(nn.Module):
    def __init__(self, max_len: int, dim: int):
        super().__init__()
        self.table = nn.Buffer(sinusoidal_table(max_len, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.table[: x.shape[1]]
