"""Pins the host tensors (on an accelerator) and copies them asynchronously in their smaller dtypes."""
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    device = torch.device(device)
    targets = targets.to(torch.float32)
    if device.type != "cpu":
        images, targets = images.pin_memory(), targets.pin_memory()
    images = images.to(device, non_blocking=True).to(torch.float32).mul_(1.0 / 255)
    targets = targets.to(device, non_blocking=True)
    return images, targets
