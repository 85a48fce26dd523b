# expect: invalid device ordinal
import torch


def worker_device(env):
    index = int(env["RANK"]) % int(env["WORLD_SIZE"])
    torch.accelerator.set_device_index(index)
    return torch.device(torch.accelerator.current_accelerator().type, index)
