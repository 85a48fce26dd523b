# expect: ran in float16
import torch


@torch.no_grad()
def predict(model, x):
    with torch.autocast(device_type=x.device.type):
        logits = model(x)
    return logits.float()
