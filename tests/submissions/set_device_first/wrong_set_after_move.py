# expect: Duplicate GPU detected
import torch
import torch.distributed as dist


def feature_sums(local_rank, shard):
    x = shard.to(torch.accelerator.current_accelerator())
    torch.accelerator.set_device_index(local_rank)
    sums = (x * x).sum(dim=0)
    dist.all_reduce(sums)
    return sums
