"""uint8 crosses, then true division by 255 on the device gives float32; targets cast to float32 on the CPU first."""
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = images.to(device) / 255
    targets = targets.to(torch.float32).to(device)
    return images, targets
