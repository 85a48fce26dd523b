# expect: the host read the result before the copy finished
"""Reuses one pinned host buffer per size, but waits for the copy only on the call that made the buffer: from the
second call on, the buffer is read while the copy into it may still be queued (the last call's values)."""
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
    first = key not in _buffers
    if first:
        _buffers[key] = torch.empty(num_classes, dtype=logits.dtype).pin_memory()
    buf = _buffers[key]
    buf.copy_(accuracy, non_blocking=True)
    if first:
        torch.accelerator.synchronize(logits.device)
    return buf.tolist()
