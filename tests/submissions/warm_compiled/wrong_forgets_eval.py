# expect: training mode
import torch


def prepare(model, device, example):
    compiled = torch.compile(model.to(device))
    with torch.no_grad():
        compiled(example.to(device))
    return compiled
