import functools

import torch


@functools.lru_cache(maxsize=32)
def _mask(size: int, device: str) -> torch.Tensor:
    # Built on the CPU and copied, but only once per size and device.
    return torch.ones(size, size, dtype=torch.bool).triu(diagonal=1).to(device)


def causal_mask(size: int, device) -> torch.Tensor:
    return _mask(size, str(device))


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
