# expect: its memory grows with the number of batches
import torch.nn.functional as F


def validation_loss(model, batches):
    model.eval()
    total = 0.0
    for x, y in batches:
        total += F.cross_entropy(model(x), y)
    return (total / len(batches)).detach()
