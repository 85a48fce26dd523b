"""Can a grading worker cap its host memory where CUDA runs? Run on a GPU machine:

    python tools/host_cap_probe.py > probe.json

A worker caps the learner's host memory with RLIMIT_DATA (grader.engine.process_setup._limit_host_memory): the private
writable memory the process has, plus limits.HOST_MEMORY. CUDA's driver maps large private regions of its own
when it starts, so the cap is set only after the worker has made its CUDA contexts. This probe does that, then
runs what graded code does on GPUs (cuBLAS, cuDNN, attention kernels, pinned memory, DataLoader workers,
DataParallel) and reports, step by step, whether each worked and how much VmData grew; then it asks for a
host tensor larger than the cap, which must fail with PyTorch's "can't allocate memory"."""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from grader.engine import limits  # noqa: E402


def vm_data() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:"))


def _pinned_loader():
    data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16, num_workers=2, pin_memory=True)
    return sum(int(x.is_pinned()) for x, _ in loader)


def main() -> None:
    report: dict = {"torch": torch.__version__, "gpus": torch.cuda.device_count(), "steps": []}
    report["vm_data_start"] = vm_data()
    for i in range(torch.cuda.device_count()):
        torch.empty(0, device=f"cuda:{i}")
    report["vm_data_after_contexts"] = base = vm_data()
    limit = base + limits.HOST_MEMORY
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    last = 2 if torch.cuda.device_count() > 1 else 1
    steps = {
        "matmul fp32 and fp16": lambda: (torch.randn(512, 512, device="cuda") @ torch.randn(512, 512, device="cuda")
                                         ).half().matmul(torch.randn(512, 512, device="cuda").half()).sum().item(),
        "conv2d and batch norm (cuDNN) forward and backward": lambda: (
            torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8)).cuda()(
                torch.randn(4, 3, 16, 16, device="cuda", requires_grad=True)).sum().backward()),
        "scaled_dot_product_attention fp16": lambda: torch.nn.functional.scaled_dot_product_attention(
            *(torch.randn(2, 4, 64, 32, device="cuda", dtype=torch.float16) for _ in range(3))).sum().item(),
        "LSTM (cuDNN)": lambda: torch.nn.LSTM(8, 16).cuda()(torch.randn(5, 3, 8, device="cuda"))[0].sum().item(),
        "Adam step, fused": lambda: _adam_step(),
        "256 MiB pinned tensor and a non_blocking upload": lambda: torch.empty(
            64 * 2**20, pin_memory=True).to("cuda", non_blocking=True).sum().item(),
        "DataLoader, 2 workers, pin_memory": _pinned_loader,
        "tensors on the last GPU, copied to the first": lambda: torch.ones(1000, device=f"cuda:{last - 1}").to(
            "cuda:0").sum().item(),
        "DataParallel forward and backward": lambda: torch.nn.DataParallel(torch.nn.Linear(8, 4).cuda())(
            torch.randn(16, 8, device="cuda")).sum().backward(),
        "1 GiB host tensor (under the cap)": lambda: torch.ones(2**28).sum().item(),
    }
    for name, step in steps.items():
        try:
            step()
            torch.cuda.synchronize()
            outcome = "ok"
        except Exception as exc:  # noqa: BLE001 - a probe reports everything
            outcome = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        report["steps"].append({"step": name, "outcome": outcome, "vm_data_growth": vm_data() - base})
    for name, size in (("10 GB host tensor", 10 * 10**9 // 4), ("7 GiB pinned tensor", 7 * 2**30 // 4)):
        try:
            torch.empty(size, pin_memory="pinned" in name).fill_(1)
            outcome = "allocated"
        except Exception as exc:  # noqa: BLE001
            outcome = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        report["steps"].append({"step": name, "outcome": outcome, "vm_data_growth": vm_data() - base})
    report["cuda_still_works"] = float((torch.ones(4, device="cuda") * 2).sum().item()) == 8.0
    print(json.dumps(report, indent=1))


def _adam_step():
    p = torch.nn.Parameter(torch.ones(1000, device="cuda"))
    opt = torch.optim.Adam([p], fused=True)
    p.sum().backward()
    opt.step()


if __name__ == "__main__":
    main()
