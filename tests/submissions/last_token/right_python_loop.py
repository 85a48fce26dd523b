import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden, lengths):
        return torch.stack([hidden[i, n - 1] for i, n in enumerate(lengths)])
