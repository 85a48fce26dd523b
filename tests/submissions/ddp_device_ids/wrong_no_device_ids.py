# expect: the model's weights are on the CPU
import torch
from torch.nn.parallel import DistributedDataParallel


def wrap(model, local_rank):
    return DistributedDataParallel(model)
