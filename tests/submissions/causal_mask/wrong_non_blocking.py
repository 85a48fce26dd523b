# expect: the mask is created on the CPU and copied
import torch


def causal_mask(size: int, device) -> torch.Tensor:
    mask = torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)
    return mask.to(device, non_blocking=True)   # still a copy, just not waited for


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
