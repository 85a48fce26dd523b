# expect: mean of the two shards
import torch
import torch.distributed as dist


def global_accuracy(logits, labels):
    accuracy = (logits.argmax(dim=1) == labels).double().mean()
    dist.all_reduce(accuracy)
    return (accuracy / dist.get_world_size()).item()
