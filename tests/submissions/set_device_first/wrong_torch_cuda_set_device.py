# expect: torch.accelerator.set_device_index(i) does what torch.cuda.set_device(i) does
import torch
import torch.distributed as dist


def feature_sums(local_rank, shard):
    torch.cuda.set_device(local_rank)
    x = shard.to(torch.accelerator.current_accelerator())
    sums = (x * x).sum(dim=0)
    dist.all_reduce(sums)
    return sums
