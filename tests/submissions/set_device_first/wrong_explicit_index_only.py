# expect: current device
import torch
import torch.distributed as dist


def feature_sums(local_rank, shard):
    device = torch.device(torch.accelerator.current_accelerator().type, local_rank)
    x = shard.to(device)
    sums = (x * x).sum(dim=0)
    dist.all_reduce(sums)
    return sums
