# expect: is on cpu, but it should be on
"""Makes each mask on the device once and caches it, but keyed by size alone: asked for the same size on another
device, it returns the mask of the first."""
import torch

_MASKS = {}


def causal_mask(size: int, device) -> torch.Tensor:
    if size not in _MASKS:
        _MASKS[size] = torch.ones(size, size, dtype=torch.bool, device=device).triu(diagonal=1)
    return _MASKS[size]


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
