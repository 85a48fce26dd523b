import torch
import torch.distributed as dist


def feature_sums(local_rank: int, shard: torch.Tensor) -> torch.Tensor:
    device = torch.device(torch.accelerator.current_accelerator().type, local_rank)
    torch.accelerator.set_device_index(device.index)
    x = shard.to(device, non_blocking=False)
    sums = x.pow(2).sum(0)
    dist.all_reduce(sums, op=dist.ReduceOp.SUM)
    return sums
