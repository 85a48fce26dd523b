import torch
import torch.nn.functional as F
from torch import nn


def class_weights(class_counts) -> torch.Tensor:
    counts = torch.tensor(class_counts, dtype=torch.float32)
    return counts.sum() / (len(counts) * counts)


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    weight = class_weights(class_counts)
    total = 0
    for inputs, labels in batches:
        logits = model(inputs)
        total = total + F.cross_entropy(logits, labels, weight=weight.to(logits.device))
    return total / len(batches)
