# expect: the targets crossed as float64
"""Images fixed, but the targets are moved first and converted on the device (float64 crosses)."""
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = images.to(device).float().div(255)
    targets = targets.to(device).float()
    return images, targets
