"""Mixed precision that only knows CUDA.

predict(model, x) runs a classifier on a batch in mixed precision, so that its matrix products move and
multiply half as many bytes:

    model    an nn.Module with float32 parameters, on the same device as x, in eval mode
    x        float32 tensor (B, F), on the CPU or on an accelerator
    returns  float32 tensor (B, C): the logits, on x's device

The matrix products (every nn.Linear of the model) must run in bfloat16, on x's device, through
torch.autocast; the model's parameters stay float32. On a CUDA GPU that is what happens. On the CPU, or on
an accelerator that is not CUDA, the matrix products run in float32: nothing fails, the work is just not done
in bfloat16 (a machine without CUDA warns once that autocast is disabled). Fix it so it works on any device.

Check your fix with:  devcourse check autocast_predict
"""

import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        logits = model(x)
    return logits.float()
