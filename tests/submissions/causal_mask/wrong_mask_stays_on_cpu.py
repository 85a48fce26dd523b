# expect: create it on the requested device
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)   # ignores device


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device).to(scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
