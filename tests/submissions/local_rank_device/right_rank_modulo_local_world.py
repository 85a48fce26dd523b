import torch


def worker_device(env: dict[str, str]) -> torch.device:
    index = int(env["RANK"]) % int(env["LOCAL_WORLD_SIZE"])
    device = torch.device(torch.accelerator.current_accelerator().type, index)
    torch.accelerator.set_device_index(device)
    return device
