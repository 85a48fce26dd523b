# expect: Duplicate GPU detected
import torch
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    model = model.to(torch.accelerator.current_accelerator())
    return DistributedDataParallel(model, device_ids=[local_rank])
