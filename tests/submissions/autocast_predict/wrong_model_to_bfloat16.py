# expect: stays float32
import torch


@torch.no_grad()
def predict(model, x):
    model = model.to(torch.bfloat16)
    return model(x.to(torch.bfloat16)).float()
