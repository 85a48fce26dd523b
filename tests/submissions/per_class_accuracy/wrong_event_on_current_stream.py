# expect: the host read the result before the copy finished
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Records an event after the non_blocking copy and waits on it, but records it on the current stream of the
current device, which need not be the logits' device."""
import torch


def per_class_accuracy(logits, labels, num_classes):
    onehot = torch.nn.functional.one_hot(labels, num_classes).to(logits.dtype)
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    accuracy = (onehot * correct[:, None]).sum(0) / onehot.sum(0).clamp(min=1)
    on_host = accuracy.to("cpu", non_blocking=True)
    if logits.device.type != "cpu":
        done = torch.get_device_module(logits.device).Event()
        done.record()
        done.synchronize()
    return [float(v) for v in on_host]
