"""Every worker of the job on the first GPU.

A job runs one worker process per GPU, started by torchrun; its process group (NCCL) is up when this code runs.
The worker of local rank i owns the node's accelerator device i. Before training, the workers compute the
per-feature scale of the whole data set: each sums the squares of its shard's features, and one all-reduce adds
the sums of every worker.

    feature_sums(local_rank, shard)  runs first in the worker of `local_rank`, before anything else touches the
                                     GPU. It makes the worker's own GPU the current device (so that everything
                                     that names the accelerator without an index, .to("cuda") or a library's
                                     allocations, lands there), moves `shard` (N, F) from the CPU to that GPU,
                                     and returns the sum over every worker's rows of x ** 2, a tensor of
                                     shape (F,) on the worker's GPU.

The code is device-agnostic: it reaches the accelerator through torch.accelerator, never torch.cuda
(torch.accelerator.set_device_index(i) does for any accelerator what torch.cuda.set_device(i) does for CUDA).

With two workers, the job dies at once: "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device ...".
Fix it.

Check your fix with:  devcourse check set_device_first
"""

import torch
import torch.distributed as dist


def feature_sums(local_rank: int, shard: torch.Tensor) -> torch.Tensor:
    accelerator = torch.accelerator.current_accelerator()
    x = shard.to(accelerator)
    sums = (x * x).sum(dim=0)
    dist.all_reduce(sums)  # adds the sums of every worker
    return sums
