import torch


def worker_device(env):
    index = int(env["LOCAL_RANK"])
    torch.accelerator.set_device_index(index)
    return torch.device(torch.accelerator.current_accelerator().type, index)
