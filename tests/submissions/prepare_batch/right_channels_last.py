"""Copies the uint8 images straight into channels_last layout on the device, converts there; targets as float32."""
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = images.to(device, memory_format=torch.channels_last).float().div_(255)
    targets = targets.to(device, torch.float32)
    return images, targets
