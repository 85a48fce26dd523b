"""The OpInfo sweep of tests/simulated/test_opinfo.py, run in a process of its own: importing PyTorch's test
utilities changes global state (torch.backends.disable_global_flags(), TorchScript's call), which no other test
of the suite may inherit.

    python tests/simulated/opinfo_sweep.py float32 backward    # prints {"ran": N, "failures": {op: error}}
"""

import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
from torch.utils._pytree import tree_leaves, tree_map  # noqa: E402

import grader.simulated as gs  # noqa: E402

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
DTYPES = {"float32": torch.float32, "float16": torch.float16, "int64": torch.int64, "bool": torch.bool,
          "complex64": torch.complex64}


def _to_sim(x):
    if isinstance(x, torch.Tensor):
        y = x.detach().to("sim")
        return y.requires_grad_() if x.requires_grad else y
    return x


def _backward(out):
    outs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    if outs:
        sum(o.sum() for o in outs).backward()


def sweep(dtype: torch.dtype, grad: bool) -> tuple[int, dict]:
    from torch.testing._internal.common_methods_invocations import op_db

    refused = {**REFUSED, **(REFUSED_FOR_INTEGERS if not dtype.is_floating_point and not dtype.is_complex else {})}
    failures, ran = {}, 0
    for op in op_db:
        if op.name.startswith(SKIPPED_PREFIXES):
            continue
        try:
            # The raw generator: OpInfo.sample_inputs also looks for the unittest method asking, by resolving the
            # module of every frame of inspect.stack().
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
    return ran, failures


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    gs.install(count=2)
    ran, failures = sweep(DTYPES[sys.argv[1]], sys.argv[2:] == ["backward"])
    print(json.dumps({"ran": ran, "failures": failures}))
