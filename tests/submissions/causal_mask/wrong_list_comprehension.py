# expect: the mask is created on the CPU and copied
"""Builds the mask as a Python list and passes it to torch.tensor(..., device=): copied from the host every call."""
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.tensor([[k > q for k in range(size)] for q in range(size)], device=device)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    mask = causal_mask(T, scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
