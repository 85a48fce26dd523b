# expect: value by Python
import torch


def masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    # No mask at all: slice each sequence to its length (one host read per row).
    rows = [x[i, : lengths[i].item()].mean(dim=0) for i in range(x.shape[0])]
    return torch.stack(rows)
