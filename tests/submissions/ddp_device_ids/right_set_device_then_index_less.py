import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, local_rank):
    torch.accelerator.set_device_index(local_rank)
    model = model.to(torch.accelerator.current_accelerator())
    return DDP(model, device_ids=[local_rank], output_device=local_rank)
