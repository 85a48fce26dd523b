"""Forces a copy with .to(..., copy=True), after which the in-place edits are safe."""
import torch


def standardize(features, device):
    x = torch.from_numpy(features).to(device, torch.float32, copy=True)
    x.sub_(x.mean(dim=0)).div_(x.std(dim=0))
    return x
