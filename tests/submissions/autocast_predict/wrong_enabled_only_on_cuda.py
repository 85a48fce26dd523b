# expect: ran in float32
# on cuda: passes (the region names CUDA and is enabled there: the bug shows on every other device)
import torch


@torch.no_grad()
def predict(model, x):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=x.is_cuda):
        logits = model(x)
    return logits.float()
