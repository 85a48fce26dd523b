# expect: is absent from the batch
"""Waits for the copy, but divides by the raw count: a class absent from the batch gives 0/0 = NaN, where the
docstring promises 0.0."""
import torch


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(
        0, labels, torch.ones_like(correct))
    return (hits / seen).to("cpu").tolist()
