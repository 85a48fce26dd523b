# expect: to the CPU
import torch


def normalize(x):
    peak = x.abs().amax().cpu()
    return x / torch.where(peak == 0, torch.ones_like(peak), peak)
