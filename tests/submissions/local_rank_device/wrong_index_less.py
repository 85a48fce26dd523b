# expect: with its index
import torch


def worker_device(env):
    torch.accelerator.set_device_index(int(env["LOCAL_RANK"]))
    return torch.device(torch.accelerator.current_accelerator().type)
