import torch
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    device = torch.device(torch.accelerator.current_accelerator().type, local_rank)
    model.to(device)
    return DistributedDataParallel(model, device_ids=[local_rank])
