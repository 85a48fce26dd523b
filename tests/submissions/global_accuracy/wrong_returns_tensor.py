# expect: Python float
import torch
import torch.distributed as dist


def global_accuracy(logits, labels):
    counts = torch.stack([(logits.argmax(dim=1) == labels).sum(), torch.tensor(labels.numel(), device=labels.device)])
    counts = counts.double()
    dist.all_reduce(counts)
    return counts[0] / counts[1]
