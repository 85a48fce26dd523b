# expect: but it should be on
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Ignores the index of `device` and uses the current accelerator whenever device is not the CPU."""
import torch


def standardize(features, device):
    target = "cpu" if str(device) == "cpu" else torch.accelerator.current_accelerator()
    x = torch.from_numpy(features).to(target, torch.float32)
    return (x - x.mean(0)) / x.std(0)
