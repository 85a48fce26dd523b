import torch


def worker_device(env):
    kind = torch.accelerator.current_accelerator().type
    device = torch.device(f"{kind}:{env['LOCAL_RANK']}")
    torch.accelerator.set_device_index(device.index)
    return device
