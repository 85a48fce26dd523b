import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        B, T, D = hidden.shape
        last = (torch.tensor(lengths) - 1).to(hidden.device)
        index = last.view(B, 1, 1).expand(B, 1, D)
        return hidden.gather(1, index).squeeze(1)
