import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    on_device = images.to(device)
    images = on_device.to(dtype=torch.float32).div_(255)
    targets = targets.to(dtype=torch.float32, device=device)
    return images, targets
