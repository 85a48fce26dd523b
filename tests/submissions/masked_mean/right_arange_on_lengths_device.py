"""Positions made on lengths.device; masked_fill zeroes the padding, mask.sum gives the counts."""
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    T = x.size(1)
    real = torch.arange(T, device=lengths.device).expand(len(lengths), T) < lengths.unsqueeze(1)
    total = x.masked_fill(~real.unsqueeze(-1), 0).sum(dim=1)
    return total / real.sum(dim=1, keepdim=True).to(x.dtype)
