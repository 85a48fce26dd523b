# expect: one copy of the (B, C) probabilities is enough
import torch


def predict_proba(model, x):
    model = model.cpu()
    x = x.cpu()
    return torch.softmax(model(x), dim=1).detach().numpy()
