# expect: wrong values
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    # "Fixed" by deleting the mask: the padding is averaged in.
    return x.mean(dim=1)
