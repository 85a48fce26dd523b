# expect: means the current device, not x's
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Makes the positions on the accelerator kind of x (x.device.type), which drops the index of a second GPU."""
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    B, T, D = x.shape
    positions = torch.arange(T, device=x.device.type)
    mask = (positions[None, :] < lengths[:, None]).to(x.dtype).unsqueeze(-1)
    return (x * mask).sum(dim=1) / lengths[:, None].to(x.dtype)
