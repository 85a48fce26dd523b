# expect: one copy of the (B, C) probabilities is enough
import numpy as np
import torch


def predict_proba(model, x):
    probs = torch.softmax(model(x), dim=1).detach()
    return np.stack([row.cpu().numpy() for row in probs])
