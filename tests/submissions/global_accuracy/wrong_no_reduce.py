# expect: own shard only
import torch


def global_accuracy(logits, labels):
    return (logits.argmax(dim=1) == labels).double().mean().item()
