import torch
import torch.distributed as dist


def feature_sums(local_rank, shard):
    kind = torch.accelerator.current_accelerator().type
    torch.accelerator.set_device_index(torch.device(kind, local_rank))
    sums = torch.zeros(shard.shape[1], device=kind)
    sums += (shard.to(kind) ** 2).sum(dim=0)
    dist.all_reduce(sums)
    return sums
