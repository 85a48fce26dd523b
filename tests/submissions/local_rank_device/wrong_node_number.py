# expect: that worker's GPU is
import torch


def worker_device(env):
    index = int(env["GROUP_RANK"]) % torch.accelerator.device_count()
    torch.accelerator.set_device_index(index)
    return torch.device(torch.accelerator.current_accelerator().type, index)
