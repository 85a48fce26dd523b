# expect: the current device is
import torch


def worker_device(env):
    return torch.device(torch.accelerator.current_accelerator().type, int(env["LOCAL_RANK"]))
