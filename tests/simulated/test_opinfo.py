"""Every operator PyTorch tests itself with (its OpInfo database), on the simulated device: each sample input
that runs on the CPU must run on `sim` too, forward in five dtypes and backward in float32, and give a result of
the CPU's shape and dtype on the device. The exceptions are CUDA's own refusals, each recorded on real GPUs.
This sweep found a conjugate view the simulator did not mark as one (a process abort in a backward) and a
missing kernel for autograd's zero gradients (tests/simulated/test_lazy_tensors.py)."""

import itertools

import pytest
import torch
from torch.utils._pytree import tree_leaves, tree_map

op_db = pytest.importorskip("torch.testing._internal.common_methods_invocations").op_db

SAMPLES_PER_OP = 2
INTEGER_MATMULS = {"addmm", "baddbmm", "bmm", "mm", "nn.functional.linear", "tensordot", "linalg.multi_dot",
                   "linalg.matrix_power"}
# name -> why the device refuses the sample as CUDA does (grader/simulated/fidelity_cuda.json)
REFUSED = {
    "tensor_split": "the sweep moves the split indices to the device; they must be on the CPU, on CUDA too",
    "histogram": "CUDA has no kernel ('histogram of a device tensor')",
    "histogramdd": "CUDA has no kernel (as histogram)",
}
REFUSED_FOR_INTEGERS = dict.fromkeys(INTEGER_MATMULS, "CUDA has no integer matmul ('matmul of int64 tensors on "
                                                      "the device')")
SKIPPED_PREFIXES = ("sparse", "to_sparse")  # sparse layouts cannot be made on the simulator (LIMITS)


def _to_sim(x):
    if isinstance(x, torch.Tensor):
        y = x.detach().to("sim")
        return y.requires_grad_() if x.requires_grad else y
    return x


def _backward(out):
    outs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    if outs:
        sum(o.sum() for o in outs).backward()


@pytest.mark.parametrize("dtype,grad", [(torch.float32, True), (torch.float32, False), (torch.float16, False),
                                        (torch.int64, False), (torch.bool, False), (torch.complex64, False)],
                         ids=["float32 backward", "float32", "float16", "int64", "bool", "complex64"])
def test_every_sample_that_runs_on_the_cpu_runs_on_the_device(dtype, grad):
    refused = {**REFUSED, **(REFUSED_FOR_INTEGERS if not dtype.is_floating_point and not dtype.is_complex else {})}
    failures, ran = {}, 0
    for op in op_db:
        if op.name.startswith(SKIPPED_PREFIXES):
            continue
        try:
            # The raw generator: OpInfo.sample_inputs also looks for the unittest method asking, by resolving the
            # module of every frame of inspect.stack() (minutes per dtype in a whole test session).
            torch.manual_seed(0)
            samples = list(itertools.islice(op.sample_inputs_func(op, "cpu", dtype, grad), SAMPLES_PER_OP))
        except Exception:  # noqa: BLE001 - an op without samples for this dtype
            continue
        for s in samples:
            args, kwargs = (s.input, *s.args), s.kwargs
            try:
                expected = op(*args, **kwargs)
                if grad:
                    _backward(expected)
            except Exception:  # noqa: BLE001 - the CPU refuses it too
                continue
            try:
                got = op(*tree_map(_to_sim, args), **tree_map(_to_sim, kwargs))
                if grad:
                    _backward(got)
            except Exception as exc:  # noqa: BLE001
                if op.name not in refused:
                    failures.setdefault(op.name, f"{type(exc).__name__}: {str(exc)[:200]}")
                continue
            ran += 1
            for a, b in zip(tree_leaves(expected), tree_leaves(got)):
                if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.device.type == "cpu" \
                        and (a.shape != b.shape or a.dtype != b.dtype):
                    failures.setdefault(op.name, f"{tuple(b.shape)} {b.dtype} instead of {tuple(a.shape)} {a.dtype}")
    assert ran > 500 and not failures, failures
