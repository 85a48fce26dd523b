"""A mask left behind on the CPU.

masked_mean(x, lengths) averages a padded batch of sequences over time, ignoring the padding.

    x        float tensor (B, T, D): B sequences of T steps, padded at the end
    lengths  int64 tensor (B,): how many steps of each sequence are real (1 <= length <= T)
    returns  float tensor (B, D): the mean over the real steps of each sequence

Both inputs arrive on the same device, which can be the CPU or an accelerator. On the CPU the function
works; on a GPU it fails with a device mismatch. Fix it so it works on any device, with the same result.

Check your fix with:  devcourse check masked_mean
"""

import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    B, T, D = x.shape
    positions = torch.arange(T)                        # (T,)
    mask = positions[None, :] < lengths[:, None]       # (B, T): True on real steps
    mask = mask.to(x.dtype).unsqueeze(-1)              # (B, T, 1)
    total = (x * mask).sum(dim=1)                      # (B, D)
    return total / lengths[:, None].to(x.dtype)
