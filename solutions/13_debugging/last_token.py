"""The traceback points at gather: solution.

torch.tensor(lengths) builds the index on the CPU; view and expand keep it there, and gather is the first
operation that meets both the index and the GPU tensor, so that is where the error is raised. Building the
index on hidden's device fixes it (a list of Python ints has to be copied to the device once anyway;
device= makes that copy part of creating the tensor).
"""

import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        B, T, D = hidden.shape
        last = torch.tensor(lengths, device=hidden.device) - 1
        index = last.view(B, 1, 1).expand(B, 1, D)
        return hidden.gather(1, index).squeeze(1)
