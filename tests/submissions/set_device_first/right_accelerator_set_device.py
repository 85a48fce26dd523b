import torch
import torch.distributed as dist


def feature_sums(local_rank, shard):
    torch.accelerator.set_device_index(local_rank)
    x = shard.to(torch.accelerator.current_accelerator())
    sums = (x * x).sum(dim=0)
    dist.all_reduce(sums)
    return sums
