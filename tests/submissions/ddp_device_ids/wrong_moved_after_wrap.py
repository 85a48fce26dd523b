# expect: device_ids and output_device arguments only work
import torch
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    wrapped = DistributedDataParallel(model, device_ids=[local_rank])
    device = torch.device(torch.accelerator.current_accelerator().type, local_rank)
    return wrapped.to(device)
