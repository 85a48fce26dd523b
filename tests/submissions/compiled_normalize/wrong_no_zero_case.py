# expect: NaN
import torch


def normalize(x):
    return x / x.abs().max()
