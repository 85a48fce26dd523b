import torch


def causal_mask(size: int, device) -> torch.Tensor:
    i = torch.arange(size, device=device)
    return i[None, :] > i[:, None]          # key index after query index


def masked_attention(scores: torch.Tensor) -> torch.Tensor:
    mask = causal_mask(scores.shape[-1], scores.device)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)
