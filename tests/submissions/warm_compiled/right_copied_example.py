import torch


def prepare(model, device, example):
    model.eval().to(device)
    served = torch.compile(model, dynamic=False)
    warm = torch.empty_like(example, device=device).copy_(example)
    with torch.no_grad():
        served(warm)
    return served
