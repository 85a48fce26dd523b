# expect: raised
import torch


def prepare(model, device, example):
    model.eval()
    compiled = torch.compile(model.to(device))
    with torch.no_grad():
        compiled(example)
    return compiled
