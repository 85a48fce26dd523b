# expect: each makes the host wait
import torch


def per_class_accuracy(logits, labels, num_classes):
    logits, labels = logits.cpu(), labels.cpu()       # compute on the host: nothing asynchronous left
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, dtype=logits.dtype).index_add_(0, labels, torch.ones_like(correct))
    return (hits / seen.clamp(min=1)).tolist()
