# expect: the mask is created on the CPU and copied
"""The shipped bug unchanged (mask made on the CPU, then copied), with the helpers under inference_mode."""
import torch


@torch.inference_mode()
def causal_mask(size: int, device) -> torch.Tensor:
    mask = torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)
    return mask.to(device)


@torch.inference_mode()
def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    mask = causal_mask(T, scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
