# expect: what crosses is the dtype at the moment of the copy
"""The shipped bug unchanged (float32 crosses instead of uint8), with the batch prepared under inference_mode."""
import torch


@torch.inference_mode()
def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = images.float().div(255).to(device)
    targets = targets.to(device).to(torch.float32)
    return images, targets
