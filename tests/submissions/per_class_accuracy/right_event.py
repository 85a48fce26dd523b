"""Records an event on the stream of the logits' device after the non_blocking copy and waits on it."""
import torch


def per_class_accuracy(logits, labels, num_classes):
    onehot = torch.nn.functional.one_hot(labels, num_classes).to(logits.dtype)
    correct = (logits.argmax(dim=1) == labels).to(logits.dtype)
    accuracy = (onehot * correct[:, None]).sum(0) / onehot.sum(0).clamp(min=1)
    on_host = accuracy.to("cpu", non_blocking=True)
    if logits.device.type != "cpu":
        done = torch.get_device_module(logits.device).Event()
        done.record(torch.get_device_module(logits.device).current_stream(logits.device))
        done.synchronize()
    return [float(v) for v in on_host]
