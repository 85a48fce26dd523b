"""A checkpoint loaded into nothing.

load_classifier(path, device) returns a Classifier holding the weights of the checkpoint at `path` (written
with torch.save(model.state_dict(), path) on a CPU), on `device`, in eval mode, ready to predict.

The real classifier is large, so it is built on the meta device (shapes only, no memory, no time spent
drawing random weights that the checkpoint replaces at once), and the checkpoint's tensors become its
weights. Nothing may be initialised at random along the way. As shipped, the model it returns holds no
weights at all, on every device. Fix it.

Check your fix with:  devcourse check load_on_meta
"""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features: int = 12, hidden: int = 48, classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def load_classifier(path, device) -> Classifier:
    state = torch.load(path, map_location=device, weights_only=True)
    with torch.device("meta"):
        model = Classifier()
    model.load_state_dict(state)
    return model.eval()
