import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = images.to(device, non_blocking=True).to(torch.float32) / 255.0
    targets = targets.float().to(device)              # converted on the CPU, float32 crosses
    return images, targets
