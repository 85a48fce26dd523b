# expect: copies first and converts on
"""The dtype is chosen in the same .to() call, but with non_blocking=True: CUDA then copies the float64 features
first and converts them on the device (copy_kernel_cuda), so twice the bytes cross (issue 27). MPS would convert
on the CPU; the simulated legs stand for CUDA."""
import numpy as np
import torch


def batch_to_device(features: np.ndarray, labels: np.ndarray, device):
    x = torch.from_numpy(features).to(device, dtype=torch.float32, non_blocking=True)
    y = torch.from_numpy(labels).to(device, non_blocking=True)
    return x, y
