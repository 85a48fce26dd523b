# expect: the images crossed as float32
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    # One .to() for device and dtype: converted on the CPU, so float32 crosses.
    images = images.to(device, torch.float32) / 255
    targets = targets.to(device, torch.float32)
    return images, targets
