# expect: torch.cuda serves NVIDIA GPUs only
import torch
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    return DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
