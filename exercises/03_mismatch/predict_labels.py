"""A batch that never reaches the model's device.

predict(model, images) labels a batch for a report: it runs the classifier and returns the predicted
class of each row, as an int64 tensor (B,) on the CPU, ready to be written to a CSV file.

    model   a classifier, already on some device: the CPU, "cuda:0", or the second GPU "cuda:1"
    images  float32 (B, F), on the CPU, straight from the DataLoader

It works as long as the model is on the CPU. With the model on a GPU it fails with a device mismatch.
Fix it so that the batch goes wherever the model is, whichever GPU that is; leave the model there.

Check your fix with:  devcourse check predict_labels
"""

import torch
from torch import nn


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor) -> torch.Tensor:
    model.eval()
    logits = model(images)
    return logits.argmax(dim=1).cpu()
