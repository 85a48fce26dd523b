# expect: adding the table must keep the embeddings' dtype
"""Registers the table as a buffer, but computes it in float64 "for accuracy" and keeps it so: float32 embeddings
come back as float64."""
import math

import torch
from torch import nn


def sinusoidal_table(max_len: int, dim: int) -> torch.Tensor:
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    table = torch.zeros(max_len, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq)
    return table


class AddPositions(nn.Module):
    def __init__(self, max_len: int, dim: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(max_len, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.table[: x.shape[1]]
