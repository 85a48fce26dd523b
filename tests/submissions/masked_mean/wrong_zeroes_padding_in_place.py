# expect: masked_mean changed the caller's x or lengths
"""Makes the mask on x's device, but zeroes the padding of the caller's x in place before summing."""
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    padding = torch.arange(T, device=x.device)[None, :] >= lengths[:, None]
    x.masked_fill_(padding.unsqueeze(-1), 0)
    return x.sum(dim=1) / lengths[:, None].to(x.dtype)
