# expect: ran in float32
import torch


@torch.no_grad()
def predict(model, x):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = model(x)
    return logits.float()
