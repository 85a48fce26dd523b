# expect: the result keeps the dtype of the scores
"""Makes the mask on the device, but attention adds a -inf bias made in float32: half-precision scores come back
as float32."""
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    bias = torch.zeros(T, T, device=scores.device).masked_fill(causal_mask(T, scores.device), float("-inf"))
    return (scores + bias).softmax(dim=-1)
