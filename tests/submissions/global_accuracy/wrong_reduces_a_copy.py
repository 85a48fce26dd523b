# expect: own shard only
import torch
import torch.distributed as dist


def global_accuracy(logits, labels):
    correct = (logits.argmax(dim=1) == labels).sum().item()
    counts = torch.tensor([correct, labels.numel()], dtype=torch.float64)
    dist.all_reduce(counts.to(labels.device))
    return (counts[0] / counts[1]).item()
