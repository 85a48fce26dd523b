"""What real NCCL, DDP and CUDA IPC say to the bugs of the chapter "Distributed workers", for the simulated group
(grader/simulated/collectives.py) and handoff (grader/simulated/processes.py) to be held to.

Each scenario runs real worker processes (spawned: CUDA cannot be used in a forked child) on this machine's GPUs
and returns the message that ended it, or the warning it printed. They need CUDA and NCCL; `duplicate_gpu` and
the others run on one GPU (two ranks on one GPU is the bug). On a GPU machine:

    python -m tests.simulated.fidelity_distributed --out grader/simulated/fidelity_distributed_cuda.json

writes the table that tests/simulated/test_collectives.py compares the simulator with (until it exists, those
comparisons say that they await it), and tests/book/test_claims.py runs the scenarios that back the chapter's
sentences directly where CUDA is present.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "grader", "simulated", "fidelity_distributed_cuda.json")


def _run(body: str, nprocs: int = 1, timeout: int = 240) -> str:
    """Run `body` in `nprocs` spawned workers (rank in `rank`, a file store in `store_file`); return everything
    they printed and raised (the last line of each worker's error last)."""
    script = textwrap.dedent('''
        import sys, traceback, torch, torch.distributed as dist, torch.multiprocessing as mp
        from torch import nn

        def worker(rank, nprocs, store_file):
            try:
                dist.init_process_group("nccl", init_method="file://" + store_file, rank=rank, world_size=nprocs)
        ''') + textwrap.indent(textwrap.dedent(body), " " * 8) + textwrap.dedent('''
            except Exception as exc:
                print(f"rank {rank}: {type(exc).__name__}: {str(exc).strip().splitlines()[-1]}", flush=True)
            finally:
                if dist.is_initialized():
                    dist.destroy_process_group()

        if __name__ == "__main__":
            mp.spawn(worker, args=(int(sys.argv[1]), sys.argv[2]), nprocs=int(sys.argv[1]))
        ''')
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scenario.py")
        with open(path, "w") as f:
            f.write(script)
        done = subprocess.run([sys.executable, path, str(nprocs), os.path.join(tmp, "store")], capture_output=True,
                              text=True, timeout=timeout)
    return done.stdout + done.stderr


def cpu_tensor_nccl() -> str:
    return _run("dist.all_reduce(torch.ones(2))\n")


def duplicate_gpu() -> str:
    """Two ranks, neither calls set_device: both tensors on cuda:0."""
    return _run("t = torch.ones(2, device='cuda')\ndist.all_reduce(t)\nprint(f'rank {rank}: no error', flush=True)\n",
                nprocs=2)


def ddp_no_device_ids() -> str:
    """A model on cuda:0 wrapped with device_ids=[0], then without, each given a CPU batch."""
    return _run("m = nn.parallel.DistributedDataParallel(nn.Linear(3, 2).cuda(0), device_ids=[0])\n"
                "print('with device_ids: output on', m(torch.randn(4, 3)).device, flush=True)\n"
                "m = nn.parallel.DistributedDataParallel(nn.Linear(3, 2).cuda(0))\nm(torch.randn(4, 3))\n")


def producer_exits() -> str:
    """A spawned producer shares a CUDA tensor through a queue. The first waits for the consumer, which adds 1 to
    the tensor in place: the producer sees the change (shared memory, not a copy). The second returns before the
    consumer has read its tensor: its process ends, and PyTorch warns."""
    script = textwrap.dedent('''
        import time, torch, torch.multiprocessing as mp

        def waits(queue, done):
            t = torch.arange(4.0, device="cuda")
            queue.put(t)
            done.wait()
            print("producer sees", t.tolist(), flush=True)

        def returns(queue):
            queue.put(torch.arange(4.0, device="cuda"))

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            queue, done = ctx.Queue(), ctx.Event()
            p = ctx.Process(target=waits, args=(queue, done))
            p.start()
            t = queue.get()
            t.add_(1)
            torch.cuda.synchronize()
            del t
            done.set()
            p.join()
            p = ctx.Process(target=returns, args=(queue,))
            p.start()
            time.sleep(5)          # the producer has returned and exits now
            t = queue.get()
            p.join()
            print("consumer read", t.device, flush=True)
        ''')
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "producer.py")
        with open(path, "w") as f:
            f.write(script)
        done = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=240)
    return done.stdout + done.stderr


SCENARIOS = {"cpu tensor to an NCCL all_reduce": cpu_tensor_nccl, "two ranks on one GPU": duplicate_gpu,
             "DDP without device_ids, CPU batch": ddp_no_device_ids, "producer exits first": producer_exits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=TABLE)
    args = parser.parse_args()
    if not torch.cuda.is_available() or not torch.distributed.is_nccl_available():
        sys.exit("needs CUDA and NCCL")
    rows = {name: run() for name, run in SCENARIOS.items()}
    meta = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "gpus": torch.cuda.device_count(),
            "nccl": ".".join(map(str, torch.cuda.nccl.version()))}
    with open(args.out, "w") as f:
        json.dump({"machine": meta, "rows": rows}, f, indent=1)
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
