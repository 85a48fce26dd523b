# expect: compiled the model again
import torch


def prepare(model, device, example):
    model = model.to(device).eval()
    compiled = torch.compile(model)
    with torch.inference_mode():
        compiled(example.to(device))
    return compiled
