# expect: raised
# on one gpu: passes (one GPU is always the current device; the simulated legs and two GPUs have another one current)
"""Creates the running total on torch.accelerator.current_accelerator() (drops the batches' index)."""
import torch


@torch.no_grad()
def evaluate(model, batches, k=3):
    dev = torch.accelerator.current_accelerator() if batches[0][0].is_cuda or batches[0][0].device.type != "cpu" else "cpu"
    hits = torch.zeros((), dtype=torch.int64, device=dev)
    for x, y in batches:
        hits += (model(x).topk(k, dim=1).indices == y[:, None]).any(dim=1).sum()
    return hits
