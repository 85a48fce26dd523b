import torch


@torch.inference_mode()
def predict(model, x):
    with torch.autocast(x.device.type, torch.bfloat16):
        return model(x).float()
