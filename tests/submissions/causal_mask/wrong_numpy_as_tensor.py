# expect: the mask is created on the CPU and copied
"""Builds the mask with NumPy and hands it to torch.as_tensor(..., device=): still a host-to-device copy per call."""
import numpy as np
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.as_tensor(np.triu(np.ones((size, size), dtype=bool), k=1), device=device)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    mask = causal_mask(T, scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
