# expect: move the loss to the model's device
# on cuda: passes (it knows only CUDA; the simulator stands for any other accelerator, where it fails, as on MPS)
import torch
from torch import nn


def make_criterion(class_counts) -> nn.Module:
    counts = torch.tensor(class_counts, dtype=torch.float32)
    criterion = nn.CrossEntropyLoss(weight=counts.sum() / (len(counts) * counts))
    if torch.cuda.is_available():            # "the GPU" is cuda:0, and only CUDA counts
        criterion = criterion.to("cuda")
    return criterion


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, class_counts) -> torch.Tensor:
    model.eval()
    criterion = make_criterion(class_counts)
    return torch.stack([criterion(model(x), y) for x, y in batches]).mean()
