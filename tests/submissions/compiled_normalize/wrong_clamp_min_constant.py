# expect: NaN
import torch


def normalize(x):
    return x / x.abs().amax().clamp_min(1e-12)
