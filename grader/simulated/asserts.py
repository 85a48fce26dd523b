"""Device-side asserts: a kernel that finds a bad index in the data.

On the CPU, an out-of-range class label, embedding index or tensor index is an IndexError raised by the
operation itself ("Target 5 is out of bounds."). A CUDA kernel cannot raise: it asserts, the operation
returns as if nothing happened, and the error comes at the next point where the host waits for the GPU
(`.item()`, a copy to the CPU, a print), as `torch.AcceleratorError: CUDA error: device-side assert
triggered`. The device's context is then broken for good: every later operation on it fails the same way,
and only a new process can use it again. Recorded on 2 x H100 (tools/GPU_RUNS.md) for cross_entropy,
nll_loss, Embedding, embedding_bag, indexing, gather, scatter_, index_select, index_add_ and take: each
returned, and the error came at `.item()` and at every operation after it. binary_cross_entropy (an input
outside [0, 1]) and multinomial (a negative probability, a row of zeros) raised the same error from the
operation itself.

The simulator runs the CPU's kernels, so it sees the CPU's IndexError (`KERNEL_ASSERTS` says which errors
are such checks of data). It then does as CUDA does: the operation returns a result of the right shape
(zeros), the device is marked broken, and the next wait for it or operation on it raises CUDA's error.
The CPU's message, which says what was out of range, is printed to stderr as CUDA prints its kernel's failed
assertion.
"""

from __future__ import annotations

import re
import sys

import torch

from . import config

# Errors of the CPU's kernels that are checks of the data, where CUDA's kernels assert instead. Each was
# recorded on CUDA (grader/simulated/fidelity_cuda.json, "... when and how it fails").
KERNEL_ASSERTS = re.compile(
    r"^(Target -?\d+ is out of bounds\.|index out of range in self|"
    r"index -?\d+ is out of bounds for dimension \d+ with size \d+|"
    r"out of range: tried to access index -?\d+ on a tensor of \d+ elements\.|"
    r"Index \d+ of input takes value -?\d+ which is not in the valid range \[0, \d+\)|"
    + "|".join(re.escape(m) for m in ("all elements of input should be between 0 and 1",
                                      "probability tensor contains either `inf`, `nan` or element < 0",
                                      "invalid multinomial distribution (sum of probabilities <= 0)")) + ")$")
# Of those, the asserts that CUDA reported within the operation itself (binary_cross_entropy, multinomial):
# the operation launches more kernels after the one that asserted, and a launch reports the failure of a
# kernel that has finished. The others surfaced at the next wait. (multinomial's message also covers inf and
# nan probabilities, which were not recorded: they are taken to assert as a negative one did.)
REPORTED_BY_THE_OPERATION = re.compile(
    r"^(all elements of input should be between 0 and 1|probability tensor contains|invalid multinomial)")

broken: set[int] = set()  # indices of the simulated devices whose context an assert has broken


def message() -> str:
    # CUDA's text as recorded on the H100s, device names aside (the link is CUDA's own documentation).
    kind = config.DEVICE_TYPE.upper()
    return (f"{kind} error: device-side assert triggered\n"
            "Search for `cudaErrorAssert' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
            "for more information.\n"
            f"{kind} kernel errors might be asynchronously reported at some other API call, so the stacktrace "
            "below might be incorrect.\n"
            f"For debugging consider passing {kind}_LAUNCH_BLOCKING=1\n"
            f"Compile with `TORCH_USE_{kind}_DSA` to enable device-side assertions.\n")


def error() -> Exception:
    return getattr(torch, "AcceleratorError", RuntimeError)(message())


def is_kernel_assert(exc: BaseException) -> bool:
    return (config.PROFILE == "cuda" and isinstance(exc, (IndexError, RuntimeError))
            and bool(exc.args) and isinstance(exc.args[0], str) and KERNEL_ASSERTS.match(exc.args[0]) is not None)


def trigger(idx: int, exc: BaseException, func, uargs, ukw):
    """The kernel of `func` on device `idx` asserted (the CPU's `exc`): break the device and return what the
    operation returns regardless, computed on the meta device (its shape and dtype, filled with zeros, on the
    CPU; None for an in-place op, whose first argument is its result)."""
    broken.add(idx)
    print(f"{config.dev(idx)}: device-side assertion failed in {func.__name__}: {exc}", file=sys.stderr)
    if REPORTED_BY_THE_OPERATION.match(exc.args[0]):
        raise error() from None
    if func._schema.arguments and func._schema.arguments[0].alias_info is not None \
            and func._schema.arguments[0].alias_info.is_write:
        return None

    def meta(x):
        return x.to("meta") if isinstance(x, torch.Tensor) else x

    out = func(*torch.utils._pytree.tree_map(meta, tuple(uargs)), **torch.utils._pytree.tree_map(meta, dict(ukw)))
    return torch.utils._pytree.tree_map(
        lambda t: torch.zeros(t.shape, dtype=t.dtype) if isinstance(t, torch.Tensor) else t, out)


def check(idx: int | None) -> None:
    """Raise CUDA's error if device `idx` (any device, when None) was broken by an assert."""
    if broken and (idx is None or idx in broken):
        raise error()
