"""The table that model.to() forgot.

AddPositions adds a fixed sinusoidal table to a batch of embeddings (B, T, D), as a transformer does.
The table is a constant, not something to train. The module works on the CPU, but after
model.to("cuda") its forward pass fails with a device mismatch. Fix the module so that model.to(device)
takes the table along, without making it a trainable parameter.

Check your fix with:  devcourse check positional_encoding
"""

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
        self.table = sinusoidal_table(max_len, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        return x + self.table[:T]
