# expect: makes Python wait
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    B, T, D = x.shape
    positions = torch.arange(T)
    try:
        mask = positions[None, :] < lengths[:, None]
    except RuntimeError:                               # the device mismatch: fall back to the CPU
        mask = (positions[None, :] < lengths.cpu()[:, None]).to(x.device)
    mask = mask.to(x.dtype).unsqueeze(-1)
    return (x * mask).sum(dim=1) / lengths[:, None].to(x.dtype)
