import torch
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    device = torch.device(torch.accelerator.current_accelerator().type, local_rank)
    return DistributedDataParallel(model.to(device), device_ids=[device])
