# expect: what crosses is the dtype at the moment of the copy
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = images.float().div(255).to(device)
    targets = targets.to(device, torch.float32)
    return images, targets
