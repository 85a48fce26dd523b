"""An error raised by a device kernel during backward reaches the learner's code as CUDA's does, and the process
goes on (grader/simulated/hook_errors.py). Raised straight through the autograd engine, it ended the process
("terminate called without an active exception"), so each case runs in a process of its own."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import torch, grader.simulated as gs
gs.install()
"""


def run(body: str) -> str:
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, f"the process ended with {r.returncode}: {r.stderr[-2000:]}"
    return r.stdout


def test_out_of_memory_in_backward_is_an_out_of_memory_error():
    out = run("""
        x = torch.randn(4096, 4096, device="sim:1", requires_grad=True)  # 64 MiB
        y = (x * 2).sin().sum()
        torch.sim.empty_cache()
        total = torch.sim.get_device_properties(1).total_memory
        torch.sim.set_per_process_memory_fraction((torch.sim.memory_reserved(1) + 2**20) / total, 1)
        try:
            y.backward()  # the gradients need new 64 MiB blocks
        except torch.OutOfMemoryError as e:
            print("raised:", str(e).splitlines()[0])
        torch.sim.set_per_process_memory_fraction(1.0, 1)
        (x * 3).sum().backward()
        print("then:", x.grad.device, float(x.grad[0, 0].item()))
    """)
    assert "raised: SIM out of memory. Tried to allocate 64.00 MiB. GPU 1" in out
    assert "then: sim:1 3.0" in out


def test_any_kernel_error_under_the_engine_is_raised_by_backward():
    out = run("""
        from grader.simulated import tensor
        generic, calls = tensor.generic, []

        def failing_in_backward(*args, **kwargs):
            if torch._C._current_graph_task_id() != -1:
                calls.append(1)
                if len(calls) == 2:
                    raise NotImplementedError("the second kernel of the backward")
            return generic(*args, **kwargs)

        x = torch.randn(8, device="sim:0", requires_grad=True)
        loss = (x * 2).sin().sum()
        tensor.generic = failing_in_backward
        try:
            loss.backward()
        except NotImplementedError as e:
            print("raised:", e)
        tensor.generic = generic
        (x * 2).sin().sum().backward()
        print("then:", x.grad is not None)
    """)
    assert "raised: the second kernel of the backward" in out
    assert "then: True" in out


def test_an_error_caught_inside_a_functions_backward_stays_caught():
    out = run("""
        class Careful(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                try:
                    return grad + torch.ones(grad.shape)  # a CPU tensor: refused, as on CUDA
                except RuntimeError as e:
                    print("caught:", str(e).splitlines()[0][:40])
                    return grad * 2

        x = torch.ones(3, device="sim:0", requires_grad=True)
        Careful.apply(x).sum().backward()
        print("grad:", x.grad.tolist())
    """)
    assert "caught: Expected all tensors to be on the same" in out
    assert "grad: [2.0, 2.0, 2.0]" in out
