# expect: has the wrong values
import torch
from torch import nn


def sinusoidal_table(max_len: int, dim: int) -> torch.Tensor:
    # "Simplified": one frequency per position, sin everywhere.
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    return torch.sin(position * torch.ones(dim))


class AddPositions(nn.Module):
    def __init__(self, max_len: int, dim: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(max_len, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.table[: x.shape[1]]
