"""Validation accuracy over every worker's shard.

A job validates with one worker process per GPU, started by torchrun; its process group (NCCL, which moves
data between GPUs) is up when this code runs. Each worker scores its own shard of the validation set, and
global_accuracy combines the shards: it adds up the correct predictions and the examples of every worker with
one all-reduce, so that every worker gets the same accuracy.

    global_accuracy(logits, labels)  logits (N, C) and labels (N,), this worker's shard, on its GPU (N may differ
                                     between workers). Returns the accuracy over all the workers' shards,
                                     (correct predictions, summed over workers) / (examples, summed over
                                     workers), as a Python float, the same on every worker.

The code is device-agnostic: it never names CUDA, so that it runs on any accelerator.

Every worker dies at the all-reduce with "RuntimeError: No backend type associated with device type cpu".
Fix it.

Check your fix with:  devcourse check global_accuracy
"""

import torch
import torch.distributed as dist


def global_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    # NCCL reduces device tensors only: count on the GPU, where the shard already is.
    correct = (logits.argmax(dim=1) == labels).sum()
    counts = torch.stack([correct, torch.tensor(labels.numel(), device=labels.device)]).to(torch.float64)
    dist.all_reduce(counts)  # sums each entry over the workers
    return (counts[0] / counts[1]).item()
