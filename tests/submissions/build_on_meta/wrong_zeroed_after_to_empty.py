# expect: the layer norm's weight
"""Fills the empty memory with zeros: defined values, but not an initialisation."""
import math

import torch
from torch import nn


def sinusoids(max_len: int, dim: int) -> torch.Tensor:
    """The (max_len, dim) table of sine and cosine position codes of "Attention is all you need"."""
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(max_len, dim)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table


class TinyEncoder(nn.Module):
    def __init__(self, vocab: int, dim: int, max_len: int, classes: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        # computed, not learned: not saved in checkpoints (persistent=False)
        self.register_buffer("positions", sinusoids(max_len, dim), persistent=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens) + self.positions[: tokens.shape[1]]
        return self.head(self.norm(h).mean(dim=1))


def build_encoder(device, vocab: int = 1000, dim: int = 32, max_len: int = 64, classes: int = 5) -> TinyEncoder:
    with torch.device("meta"):
        model = TinyEncoder(vocab, dim, max_len, classes)
    model.to_empty(device=device)
    with torch.no_grad():
        for t in list(model.parameters()):
            t.zero_()
        model.positions.copy_(sinusoids(max_len, dim))
    return model
