# expect: wrong values
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    return scores.softmax(dim=-1)   # the mask was the costly part, so it went
