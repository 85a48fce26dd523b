# expect: the host read the result before the copy finished
# on cuda: passes (it reads a non-blocking copy before it is known to have arrived: on a GPU the copy is usually
# done in time, on the simulator never; the race is real, and the fix is the same)
"""Synchronises before the non_blocking copy instead of after it: the copy is still in flight when read."""
import torch


def per_class_accuracy(logits, labels, num_classes):
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    hits = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(0, labels, correct)
    seen = torch.zeros(num_classes, device=logits.device, dtype=logits.dtype).index_add_(
        0, labels, torch.ones_like(correct))
    accuracy = hits / seen.clamp(min=1)
    if logits.device.type != "cpu":
        torch.accelerator.synchronize(logits.device)
    on_host = accuracy.to("cpu", non_blocking=True)
    return on_host.tolist()
