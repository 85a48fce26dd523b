import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    positions = lengths.new_ones(T).cumsum(0) - 1                     # 0..T-1, where lengths live
    mask = positions.unsqueeze(0) < lengths.unsqueeze(1)              # (B, T)
    weights = mask.to(x.dtype) / lengths.unsqueeze(1).to(x.dtype)     # (B, T)
    return torch.einsum("bt,btd->bd", weights, x)
