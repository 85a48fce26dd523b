# expect: left in training mode
"""Runs on any device but drops model.eval(): the dropout layers stay active, so the predictions are those of a
randomly thinned model (the grader's model had no dropout before, so this passed)."""
import torch


@torch.no_grad()
def predict(model, batches, device):
    device = torch.device(device)
    model.to(device)
    return torch.cat([model(x.to(device)).argmax(dim=1) for x in batches])
