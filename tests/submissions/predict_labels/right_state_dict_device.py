"""Takes the device from the first state_dict entry and uses inference_mode and max().indices."""
import torch
from torch import nn


def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    device = next(iter(model.state_dict().values())).device
    with torch.inference_mode():
        return model(images.to(device=device)).max(dim=1).indices.to("cpu")
