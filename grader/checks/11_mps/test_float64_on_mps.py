"""Grader for float64_on_mps: NumPy's float64 must become float32 at the boundary, in the copy itself."""

import numpy as np
import torch

from grader.engine.expect import GradeFailure, expect_close, expect_device, expect_tensor, fail, measure, running

FIX = ("choose the dtype where the data enters PyTorch, in the same call that moves it: "
       "torch.from_numpy(features).to(device, dtype=torch.float32) (or torch.tensor(features, dtype=torch.float32, "
       "device=device)).")


def draw():
    n, f = np.random.randint(6, 20), np.random.randint(3, 9)
    features = np.random.rand(n, f) * 10 - 5                 # float64, as NumPy makes it
    labels = np.random.randint(0, 4, size=n).astype(np.int64)
    return features, labels


def call(submission, device, features, labels):
    try:
        with running(f"batch_to_device(features, labels, {str(device)!r})", submission):
            out = submission.batch_to_device(features, labels, device)
    except GradeFailure as exc:
        if "float64" in str(exc):   # MPS: "Cannot convert a MPS Tensor to float64 dtype"
            fail(f"{exc}\nThe features are still float64 when they reach {device}: {FIX}")
        raise
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(f"batch_to_device should return a pair (x, y), got {type(out).__name__}.")
    x = expect_tensor(out[0], "x, the first value batch_to_device returns")
    y = expect_tensor(out[1], "y, the second value batch_to_device returns")
    return x, y


def test_features_become_float32(submission, device):
    features, labels = draw()
    x, _ = call(submission, device, features, labels)
    if x.dtype == torch.float64:
        fail(f"x is still float64 on {device}: a tensor made from a NumPy array (torch.from_numpy, torch.tensor, "
             f"torch.as_tensor) keeps NumPy's dtype unless told otherwise, and NumPy's default is float64, which a "
             f"float32 model refuses and MPS cannot hold at all. {FIX}")
    if x.dtype != torch.float32:
        fail(f"x is {x.dtype}; the model expects float32: {FIX}")


def test_both_land_on_the_device(submission, device):
    features, labels = draw()
    x, y = call(submission, device, features, labels)
    expect_device(x, device, "x", "move the features to the device you are given.")
    expect_device(y, device, "y", "move the labels to the device too.")


def test_values_and_label_dtype_are_kept(submission, device):
    features, labels = draw()
    x, y = call(submission, device, features, labels)
    expect_close(x, torch.from_numpy(features).float(), "x", atol=1e-5, rtol=1e-6)
    if y.dtype != torch.int64:
        fail(f"y is {y.dtype}: labels are class indices and must stay int64 (cross_entropy wants them so); "
             "convert only the features.")
    if not torch.equal(y.cpu(), torch.from_numpy(labels)):
        fail("y does not hold the labels it was given: the fix changed them.")


def test_no_float64_data_is_sent_to_the_device(submission, device):
    features, labels = draw()
    with measure(device) as m:
        call(submission, device, features, labels)
    as_float64 = features.size * 8
    sent64 = [c for c in m.h2d if c.nbytes == as_float64]
    if any(c.converted_on == "device" for c in sent64):
        fail(f"batch_to_device copied {as_float64} bytes of float64 features to {device}: with non_blocking=True, "
             f".to(device, dtype=torch.float32) copies first and converts on {device} (CUDA does; MPS converts on "
             f"the CPU), which sends twice the bytes. Convert before the copy, torch.from_numpy(features).float()"
             f".to(device, non_blocking=True), or make the combined call blocking.")
    if sent64:
        fail(f"batch_to_device copied {as_float64} bytes of float64 features to {device} and converted them "
             f"there: on MPS that copy fails, elsewhere it sends twice the bytes and runs an extra kernel. "
             f"Convert on the way, not after arriving: {FIX}")
    if len(m.h2d) > 2:
        fail(f"batch_to_device made {len(m.h2d)} copies from the CPU to {device} for two arrays: one copy each "
             "is enough when the dtype is chosen in the same .to() call.")
