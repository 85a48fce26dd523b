"""A model compiled for the wrong device.

prepare(model, device, example) gets a trained classifier ready to serve requests on `device`:

    model    an nn.Module on the CPU, as loaded from a checkpoint (it may have dropout)
    device   the device it will serve on: the CPU or an accelerator (a torch.device)
    example  a CPU tensor shaped like every request it will serve
    returns  the model compiled with torch.compile, in eval mode, on `device`, and warmed up: one forward
             pass of `example` under torch.no_grad() has already compiled it, so that the first request (a
             batch of example's shape on `device`, run under torch.no_grad()) finds it compiled and compiles
             nothing

It returns a model that gives the right answers on any device. But on an accelerator the first request
compiles the model again, as if it had never been warmed up: the warm-up compiled a version that is never
used. Fix it so that the warm-up compiles what the requests will run.

Check your fix with:  devcourse check warm_compiled
"""

import torch
from torch import nn


def prepare(model: nn.Module, device: torch.device, example: torch.Tensor) -> nn.Module:
    model.eval()
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(example)      # warm-up: compile now, not at the first request
    return compiled.to(device)
