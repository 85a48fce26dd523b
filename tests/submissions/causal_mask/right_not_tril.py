"""The complement of the lower triangle, made on the device with torch.ones(..., device=)."""
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, dtype=torch.bool, device=device).tril().logical_not()


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    mask = causal_mask(T, scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
