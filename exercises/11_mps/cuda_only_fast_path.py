"""Only CUDA counts as a GPU.

predict(model, batches, device) runs a classifier over a list of input batches (CPU tensors from a
loader) and returns the predicted class of every sample, as one int64 tensor on `device`. The caller
passes the device it chose, for instance with torch.accelerator: "cuda:0", "cuda:1", "mps", "xpu"...

The helper was written on a machine with a single NVIDIA GPU, and it decides whether it is "on a GPU"
by comparing the device with the string "cuda". On an Apple GPU, an Intel GPU or a second NVIDIA GPU
("cuda:1") it silently runs the whole model on the CPU and only copies the answer to the device at
the end. Nothing fails; the accelerator just sits idle. Fix it so that it runs on whatever accelerator
it is given.

Check your fix with:  devcourse check cuda_only_fast_path
"""

import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, batches: list[torch.Tensor], device) -> torch.Tensor:
    device = torch.device(device)
    if str(device) == "cuda":              # the GPU path
        model.to(device)
        run_on = device
    else:                                  # the CPU path
        model.cpu()
        run_on = torch.device("cpu")
    model.eval()
    predictions = [model(x.to(run_on, non_blocking=True)).argmax(dim=1) for x in batches]
    return torch.cat(predictions).to(device)
