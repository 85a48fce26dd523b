# expect: the host read the result before the copy finished
import torch


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(
        0, labels, torch.ones_like(correct))
    buffer = torch.empty(num_classes, dtype=logits.dtype).pin_memory()
    buffer.copy_(hits / seen.clamp(min=1), non_blocking=True)
    return buffer.tolist()
