"""Grader for standardize_features: the caller's NumPy array must stay as it was, on every leg.

torch.from_numpy shares memory with the array and .to() returns the same tensor when device and dtype
already match, so in-place edits corrupt the caller's array on the CPU only (on an accelerator .to()
copies). Checked on every leg, with fresh data: the array is unchanged after the call, the result is a
float32 tensor on the device with the reference values, and it does not share memory with the array
(a later change to the dataset must not change a batch already made)."""

import random

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from grader.guard import audit
from grader.engine.expect import GradeFailure, expect_close, expect_device, fail, running
from grader.engine.instruments import learner_line

FIX = ("torch.from_numpy and torch.as_tensor share the caller's memory, and .to() returns the same tensor when "
       "nothing has to change (on the CPU): do not modify it in place; compute out of place, or copy first "
       "(.clone()).")
NUMPY_FIX = ("The array was changed by NumPy code, before or beside any tensor: an in-place NumPy operation "
             "(features -= ..., features /= ..., np.subtract(..., out=features)) writes into the caller's array "
             "itself. Compute out of place (features - features.mean(axis=0)), or on a copy, or on the tensor.")


class WritesInto(TorchDispatchMode):
    """Records the learner's lines whose in-place tensor operations write into the memory of a NumPy array
    (a tensor made by torch.from_numpy or torch.as_tensor shares it)."""

    def __init__(self, array: np.ndarray):
        super().__init__()
        self.start, self.end = array.ctypes.data, array.ctypes.data + array.nbytes
        self.lines = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            for arg, value in zip(func._schema.arguments, list(args) + list(kwargs.values())):
                if (arg.alias_info is not None and arg.alias_info.is_write and isinstance(value, torch.Tensor)
                        and value.device.type == "cpu" and self._inside(value)):
                    self.lines.append(learner_line())
        except Exception:  # recording must never change what the learner's code does
            pass
        return func(*args, **kwargs)

    def _inside(self, t: torch.Tensor) -> bool:
        start = t.untyped_storage().data_ptr()
        return start < self.end and self.start < start + t.untyped_storage().nbytes()


audit.CHECK_MODES.add(WritesInto)  # the grader's own mode, entered around learner code


def features(dtype=np.float32):
    n, f = random.randint(20, 60), random.randint(3, 8)
    scale = np.random.uniform(0.5, 20.0, size=f)
    shift = np.random.uniform(-50.0, 50.0, size=f)
    return (np.random.randn(n, f) * scale + shift).astype(dtype)


def reference(arr):
    x = torch.tensor(arr, dtype=torch.float64)
    return ((x - x.mean(dim=0)) / x.std(dim=0)).float()


def call(submission, arr, device):
    with running(f"standardize(features, {str(device)!r})", submission):
        return submission.standardize(arr, device)


def column_means(arr: np.ndarray) -> list[float]:
    return np.round(arr.mean(axis=0, dtype=np.float64)[:3], 2).tolist()


def call_watching_the_array(submission, arr, device, what):
    """Call standardize on `arr`; if the array changed, fail saying which code changed it: in-place tensor
    operations on memory shared with the array (found by WritesInto, with their lines), or NumPy code (found by
    calling again on a read-only array, where NumPy raises at the line that writes)."""
    before = arr.copy()
    watch = WritesInto(arr)
    with watch:
        out = call(submission, arr, device)
    if np.array_equal(arr, before):
        return out
    changed = (f"standardize(features, {str(device)!r}) changed the caller's {what}: its column means went from "
               f"{column_means(before)}... to {column_means(arr)}"
               "... The caller's array was modified in place")
    if watch.lines:
        lines = ", ".join(dict.fromkeys(f"{line}" for line in watch.lines if line)) or "your code"
        fail(f"{changed}, by in-place tensor operations on a tensor that shares its memory ({lines}). {FIX}")
    frozen = before.copy()
    frozen.flags.writeable = False
    try:
        call(submission, frozen, device)
        where = ""
    except GradeFailure as exc:  # names the learner's line that wrote into the (now read-only) array
        where = f"\nCalled again with the array made read-only, {str(exc).splitlines()[0]}"
    fail(f"{changed}. {NUMPY_FIX}{where}")


def test_leaves_the_callers_array_unchanged(submission, device):
    call_watching_the_array(submission, features(), device, "array")


def test_standardizes_on_the_device(submission, device):
    arr = features()
    out = call(submission, arr.copy(), device)
    expect_device(out, device, "standardize's result", "create it with .to(device).")
    if out.dtype != torch.float32:
        fail(f"standardize returned {out.dtype}; the model takes float32.")
    expect_close(out, reference(arr), "standardize(features, device)", atol=1e-4)


def test_converts_other_dtypes_too(submission, device):
    arr = features(np.float64)
    out = call_watching_the_array(submission, arr, device, "float64 array")
    if out.dtype != torch.float32:
        fail(f"standardize of a float64 array returned {out.dtype}; the model takes float32.")
    expect_close(out, reference(arr), "standardize of a float64 array", atol=1e-4)


def test_result_is_independent_of_the_array(submission, device):
    arr = features()
    out = call(submission, arr, device)
    kept = out.detach().cpu().clone()
    arr += 1000.0  # the caller updates its dataset later
    if not torch.equal(out.detach().cpu(), kept):
        fail("standardize's result still shares memory with the caller's array: changing the array later "
             "changed the batch. Return a tensor of its own.")
