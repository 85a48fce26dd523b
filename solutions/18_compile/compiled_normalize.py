"""A compiled function that reads the device: solution.

The peak stays a tensor on x's device, and the all-zero case is a choice between two tensors (torch.where)
rather than a Python if: nothing leaves the device, and torch.compile captures the whole function.
"""

import torch


def normalize(x: torch.Tensor) -> torch.Tensor:
    peak = x.abs().amax()
    return x / torch.where(peak == 0, torch.ones_like(peak), peak)
