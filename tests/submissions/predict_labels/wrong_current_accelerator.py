# expect: move the inputs to the model's device
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
import torch
from torch import nn

DEVICE = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    # The accelerator, with no index: the current one, not necessarily the model's.
    return model(images.to(DEVICE)).argmax(dim=1).cpu()
