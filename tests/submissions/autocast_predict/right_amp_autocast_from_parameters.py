import torch


def predict(model, x):
    device_type = next(model.parameters()).device.type
    with torch.no_grad(), torch.amp.autocast(device_type, dtype=torch.bfloat16):
        out = model(x)
    return out.to(torch.float32)
