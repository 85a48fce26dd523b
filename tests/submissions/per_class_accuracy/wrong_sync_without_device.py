# expect: the host read the result before the copy finished
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Reuses one pinned host buffer per size for the non_blocking copy, but synchronises without naming the device:
torch.accelerator.synchronize() waits for the current device, which need not be the logits' device."""
import torch

_buffers = {}


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.bincount(labels, minlength=num_classes).to(logits.dtype)
    accuracy = hits / seen.clamp(min=1)
    if logits.device.type == "cpu":
        return accuracy.tolist()
    key = (num_classes, logits.dtype)
    if key not in _buffers:
        _buffers[key] = torch.empty(num_classes, dtype=logits.dtype).pin_memory()
    buf = _buffers[key]
    buf.copy_(accuracy, non_blocking=True)
    torch.accelerator.synchronize()
    return buf.tolist()
