"""Writes True at the upper-triangle indices of a zero mask, both made on the device."""
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    mask = torch.zeros(size, size, dtype=torch.bool, device=device)
    rows, cols = torch.triu_indices(size, size, offset=1, device=device)
    mask[rows, cols] = True
    return mask


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    mask = causal_mask(T, scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
