# expect: move the inputs to the model's device
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    images = images.to("cuda" if torch.cuda.is_available() else "cpu")
    return model(images).argmax(dim=1).cpu()
