import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    raw = torch.empty(images.shape, dtype=torch.uint8, device=device)
    raw.copy_(images)                                  # uint8 crosses
    out_images = raw.float().mul_(1 / 255)
    out_targets = torch.empty(targets.shape, dtype=torch.float32, device=device)
    out_targets.copy_(targets.to(torch.float32))
    return out_images, out_targets
