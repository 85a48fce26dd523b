# expect: returned a tensor
"""Returns the accuracy tensor itself (synchronised), where the contract promises a list of Python floats."""
import torch


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(
        0, labels, torch.ones_like(correct))
    return (hits / seen.clamp(min=1)).cpu()
