# expect: No backend type associated with device type cpu
import torch
import torch.distributed as dist


def feature_sums(local_rank, shard):
    torch.accelerator.set_device_index(local_rank)
    sums = (shard * shard).sum(dim=0)
    dist.all_reduce(sums)
    return sums.to(torch.accelerator.current_accelerator())
