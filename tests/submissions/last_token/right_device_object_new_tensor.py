"""Uses hidden.new_tensor so the index inherits hidden's device (dtype set to long)."""
import torch
from torch import nn


class LastTokenPooler(nn.Module):
    def forward(self, hidden, lengths):
        B, T, D = hidden.shape
        last = hidden.new_tensor(lengths, dtype=torch.long) - 1
        return hidden.gather(1, last.view(B, 1, 1).expand(B, 1, D)).squeeze(1)
