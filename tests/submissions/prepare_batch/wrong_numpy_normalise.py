# expect: what crosses is the dtype at the moment of the copy
"""Scales in NumPy and builds the device tensor with torch.as_tensor(..., device=): float32 pixels cross."""
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = torch.as_tensor(images.numpy() / 255, dtype=torch.float32, device=device)
    targets = torch.as_tensor(targets.numpy(), dtype=torch.float32, device=device)
    return images, targets
