# expect: compiled the model again
import torch


def prepare(model, device, example):
    model = model.to(device).eval()
    compiled = torch.compile(model)
    compiled(example.to(device))
    return compiled
