# expect: has shape
"""Makes the mask on the device, but shapes it (1, 1, T, T) for (batch, heads, T, T) scores: scores with fewer
leading dimensions come back with extra ones."""
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device)[None, None]
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
