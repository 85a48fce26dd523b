# expect: compiled the model again
import torch


def prepare(model, device, example):
    model = model.to(device).eval()
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(example[:1].to(device))      # one row is enough to compile it
    return compiled
