# expect: 0-dim tensors
"""Waits for the copy, but list() of a CPU tensor gives 0-dim tensors, not the Python floats the logger takes."""
import torch


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(
        0, labels, torch.ones_like(correct))
    return list((hits / seen.clamp(min=1)).to("cpu"))
