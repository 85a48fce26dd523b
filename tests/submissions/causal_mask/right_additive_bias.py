"""Float triu made on the device, cast to bool; attention adds a -inf bias instead of masked_fill."""
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, device=device).triu(1).bool()


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device)
    bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device).masked_fill_(mask, float("-inf"))
    return torch.softmax(scores + bias, dim=-1)
