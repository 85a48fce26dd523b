import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        last = torch.as_tensor(lengths, device=hidden.device) - 1
        return hidden[rows, last]
