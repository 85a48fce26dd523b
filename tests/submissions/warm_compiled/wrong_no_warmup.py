# expect: compiled nothing
import torch


def prepare(model, device, example):
    model = model.to(device).eval()
    return torch.compile(model)
