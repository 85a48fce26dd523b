# expect: the host read the result before the copy finished
"""Sleeps a millisecond 'to let the copy land' instead of synchronising."""
import time

import torch


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(
        0, labels, torch.ones_like(correct))
    accuracy = hits / seen.clamp(min=1)
    on_host = accuracy.to("cpu", non_blocking=True)
    time.sleep(0.001)
    return on_host.tolist()
