import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.triu(torch.full((size, size), True, device=device), diagonal=1)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    keep = ~causal_mask(T, scores.device)
    return torch.where(keep, scores, float("-inf")).softmax(dim=-1)
