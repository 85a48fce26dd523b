"""Grader for standardize_features: the caller's NumPy array must stay as it was, on every leg.

torch.from_numpy shares memory with the array and .to() returns the same tensor when device and dtype
already match, so in-place edits corrupt the caller's array on the CPU only (on an accelerator .to()
copies). Checked on every leg, with fresh data: the array is unchanged after the call, the result is a
float32 tensor on the device with the reference values, and it does not share memory with the array
(a later change to the dataset must not change a batch already made)."""

import random

import numpy as np
import torch

from grader.expect import expect_close, expect_device, fail, running

FIX = ("torch.from_numpy shares the caller's memory, and .to() returns the same tensor when nothing has to "
       "change (on the CPU): do not modify it in place; compute out of place, or copy first (.clone()).")


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


def test_leaves_the_callers_array_unchanged(submission, device):
    arr = features()
    before = arr.copy()
    call(submission, arr, device)
    if not np.array_equal(arr, before):
        fail(f"standardize(features, {str(device)!r}) changed the caller's array: its column means went from "
             f"{np.round(before.mean(axis=0)[:3], 2).tolist()}... to {np.round(arr.mean(axis=0)[:3], 2).tolist()}... "
             f"The caller's array was modified in place. {FIX}")


def test_standardizes_on_the_device(submission, device):
    arr = features()
    out = call(submission, arr.copy(), device)
    expect_device(out, device, "standardize's result", "create it with .to(device).")
    if out.dtype != torch.float32:
        fail(f"standardize returned {out.dtype}; the model takes float32.")
    expect_close(out, reference(arr), "standardize(features, device)", atol=1e-4)


def test_converts_other_dtypes_too(submission, device):
    arr = features(np.float64)
    before = arr.copy()
    out = call(submission, arr, device)
    if not np.array_equal(arr, before):
        fail(f"standardize changed the caller's float64 array. {FIX}")
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
