"""A model compiled for the wrong device: solution.

torch.compile compiles at the first call, for the devices of the tensors it sees, parameters included, and
guards them: a call on another device compiles again. Move the model and the example to the serving device
first; the warm-up then compiles the version the requests run.
"""

import torch
from torch import nn


def prepare(model: nn.Module, device: torch.device, example: torch.Tensor) -> nn.Module:
    model.eval()
    compiled = torch.compile(model.to(device))
    with torch.no_grad():
        compiled(example.to(device))
    return compiled
