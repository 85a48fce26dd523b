# expect: makes Python wait
"""Skips the masking 'when there is nothing to mask', which reads a device value in an if."""
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device)
    if mask.any():
        scores = scores.masked_fill(mask, float("-inf"))
    return scores.softmax(dim=-1)
