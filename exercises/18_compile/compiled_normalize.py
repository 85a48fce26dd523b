"""A compiled function that reads the device.

normalize(x) scales a batch so that its largest absolute value becomes 1, as a data pipeline does to audio
or features before a model sees them. The training script compiles it, torch.compile(normalize), and calls it
on every batch:

    x        float tensor (B, N), on the CPU or on an accelerator
    returns  a tensor of x's shape, dtype and device: x divided by its largest absolute value;
             a batch of zeros comes back as zeros

Its values are right everywhere. But it reads the peak back into Python: torch.compile cannot put that read
in its graph, so it splits the function there on every call (a "graph break"), and on an accelerator every
call waits for the device before it can go on. Fix it so that the whole function compiles to one graph, with
nothing read back to the host.

Check your fix with:  devcourse check compiled_normalize
"""

import torch


def normalize(x: torch.Tensor) -> torch.Tensor:
    peak = x.abs().max().item()
    if peak == 0:
        return torch.zeros_like(x)
    return x / peak
