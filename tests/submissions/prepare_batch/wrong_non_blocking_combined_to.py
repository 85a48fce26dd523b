# expect: the targets crossed as float64
"""The images are right (uint8 crosses), but the targets are converted in one call with non_blocking=True. With
non_blocking=True CUDA copies first and converts on the device (copy_kernel_cuda), so the float64 targets
cross: 8 bytes a value, twice what float32 needs (measured with the profiler on an H200: 512 bytes against 256
for float32 -> float16). It passed while the grader counted the converted bytes (issue 27)."""
import torch


def prepare_batch(images: torch.Tensor, targets: torch.Tensor, device):
    images = images.to(device, non_blocking=True).float().div_(255)
    targets = targets.to(device, torch.float32, non_blocking=True)
    return images, targets
