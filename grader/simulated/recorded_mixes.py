"""CUDA's own answer to an op that meets CPU and device tensors, recorded on a real GPU.

Whether CUDA takes a CPU tensor beside device tensors, and in what words it refuses, is decided op by op, in
places no table exposes: TensorIterator's `allow_cpu_scalars` (a 0-dim CPU tensor passes in `x * t`, not in
`addcdiv` or `mse_loss`), kernels that assert their operands are on the device (`lerp`, `smooth_l1_loss`),
and checks written by hand (`block_diag`, `masked_fill`, `addcmul`). tests/simulated/mix_sweep.py runs every
OpInfo sample on CUDA with one tensor argument (or two) on the CPU and records, for each operator the
dispatcher saw and each set of CPU arguments, what CUDA said (cpu_mixes_cuda.json). The simulator raises the
same error for the same operator and arguments (`check`), before its own rules (grader.simulated.placement),
which cover what the sweep never met.

A rule is kept only where every recorded call agreed, and only for refusals that name the CPU: an error about
shapes or dtypes comes from the op itself, on the simulator too. Batch norms are left out: CUDA picks cuDNN's
kernel (and its message) inside `batch_norm`, above the operator the simulator sees, and placement decides
that choice as CUDA does.
"""

from __future__ import annotations

import builtins
import functools
import json
from pathlib import Path

import torch

from .config import DEVICE_TYPE
from .placement import argument_values, op_key

TABLE = Path(__file__).with_name("cpu_mixes_cuda.json")
DEV, TYPE, UPPER = "@DEV@", "@type@", "@TYPE@"  # placeholders in a recorded message
ERRORS = {"RuntimeError", "NotImplementedError", "IndexError", "TypeError", "ValueError"}
#: Operators whose CUDA kernel is chosen above them (see above): not recorded.
CHOSEN_ABOVE = frozenset({"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
                          "_native_batch_norm_legit_functional", "_batch_norm_with_update", "_batch_norm_no_update",
                          "cudnn_batch_norm"})


def names_the_cpu(message: str) -> bool:
    """A refusal because of where a tensor is, not of its shape or dtype."""
    return "cpu" in message or "CPU" in message


def mix_key(func, args, kwargs) -> str | None:
    """`op|arg:kind,...` for the CPU tensor arguments of a call that also has a tensor on another device
    (kind 0: 0-dim, n: any other), by schema name (a list's elements as name[i]); None for any other call, and
    for calls with a sparse tensor."""
    cpu, device = [], False
    for name, value in argument_values(func, args, kwargs).items():
        items = enumerate(value) if isinstance(value, (list, tuple)) else ((None, value),)
        for i, t in items:
            if not isinstance(t, torch.Tensor):
                continue
            if t.layout is not torch.strided:
                return None  # sparse tensors go to other kernels, with rules of their own (placement.sparse_check)
            if t.device.type != "cpu":
                device = True
            else:
                cpu.append(f"{name if i is None else f'{name}[{i}]'}:{'0' if t.dim() == 0 else 'n'}")
    return f"{op_key(func)}|{','.join(sorted(cpu))}" if cpu and device else None


def template(message: str, device: str) -> str:
    """A recorded message with the device (`cuda:0`) and the device type as placeholders."""
    kind = device.split(":")[0]
    return message.replace(device, DEV).replace(kind.upper(), UPPER).replace(kind, TYPE)


@functools.cache
def _table() -> tuple[dict, frozenset]:
    try:
        refusals = json.loads(TABLE.read_text())["refusals"]
    except (OSError, ValueError, KeyError):
        refusals = {}
    return refusals, frozenset(key.split("|", 1)[0] for key in refusals)


def check(func, args, kwargs, device: torch.device) -> None:
    """Raise what CUDA raised for this op and these CPU arguments, where it was recorded."""
    refusals, ops = _table()
    if op_key(func) not in ops:
        return
    rule = refusals.get(mix_key(func, args, kwargs))
    if rule is not None:
        kind, text = rule
        error = getattr(builtins, kind) if kind in ERRORS else RuntimeError
        raise error(text.replace(DEV, str(device)).replace(UPPER, DEVICE_TYPE.upper()).replace(TYPE, DEVICE_TYPE))
