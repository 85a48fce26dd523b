"""Grader for centroid_history: each frame of the history must be a snapshot, not a view of the centroids.

On the CPU, `.cpu()` returns the tensor itself and `.numpy()` shares its memory, so frames recorded from a
tensor updated in place all show its last state; on an accelerator `.cpu()` copies and the bug hides.
Checked on every leg with fresh points (float64, so that the nearest-centroid choices agree bit for bit
between devices): every frame is a NumPy array equal to the reference's state after its own step, and no
two frames share memory. The frames keep the points' dtype: float32 points give float32 frames, which a snapshot through .tolist() or
.double() does not. (Their values are checked on float64 points only: in float32 a GPU's cdist and the CPU's may
round a point near the boundary of two clusters to different centroids.)"""

import random

import numpy as np
import torch

from grader.engine.expect import expect_close, fail, running

FIX = ("on the CPU, .cpu() returns the tensor itself and .numpy() shares its memory, so every frame is a view "
       "of the one centroid tensor that copy_ overwrites: record a snapshot (.copy() the array, or .clone() "
       "the tensor first).")


def lloyd(points, k, steps):
    centroids = points[:k].clone()
    frames = []
    for _ in range(steps):
        assign = torch.cdist(points, centroids).argmin(dim=1)
        sums = torch.zeros_like(centroids).index_add_(0, assign, points)
        counts = torch.bincount(assign, minlength=k).clamp(min=1)
        centroids = sums / counts[:, None].to(points.dtype)
        frames.append(centroids.clone())
    return frames


def problem(dtype=torch.float64):
    """Points whose reference trajectory really moves from the first step to the last."""
    for _ in range(50):
        k, dim, steps = random.randint(2, 4), random.randint(2, 3), random.randint(4, 6)
        centers = torch.rand(k, dim, dtype=dtype) * 20 - 10
        points = centers[torch.randint(k, (random.randint(40, 80),))]
        points = points + 2.5 * torch.randn_like(points)
        frames = lloyd(points, k, steps)
        if (frames[0] - frames[-1]).abs().max() > 1e-2:
            return points, k, steps, frames
    raise RuntimeError("could not draw a k-means problem that moves")


def run(submission, device, dtype=torch.float64):
    points, k, steps, expected = problem(dtype)
    with running(f"kmeans(points, {k}, {steps}) with points on {device}", submission):
        history = submission.kmeans(points.to(device), k, steps)
    if not isinstance(history, list) or len(history) != steps:
        got = f"a list of {len(history)}" if isinstance(history, list) else type(history).__name__
        fail(f"kmeans(points, {k}, {steps}) should return a list of {steps} arrays, one per step; got {got}.")
    for i, frame in enumerate(history, start=1):
        if not isinstance(frame, np.ndarray):
            fail(f"frame {i} of the history is a {type(frame).__name__}, not a NumPy array.")
        want = str(dtype).removeprefix("torch.")
        if frame.dtype != np.dtype(want):
            fail(f"frame {i} of the history is {frame.dtype}, but the points are {want}: keep their dtype (a "
                 "copy to the CPU needs no conversion; .double(), .float(), or Python floats from .tolist(), which "
                 "NumPy makes float64, change it).")
    return history, expected


def test_every_frame_is_its_own_step(submission, device):
    history, expected = run(submission, device)
    for i, (frame, want) in enumerate(zip(history, expected), start=1):
        got = torch.from_numpy(np.array(frame))
        if got.shape == want.shape and torch.allclose(got.to(want.dtype), expected[-1], atol=1e-6) \
                and not torch.allclose(want, expected[-1], atol=1e-6):
            fail(f"frame {i} of {len(history)} shows the final centroids, not the centroids after step {i}: "
                 + FIX)
        expect_close(got, want, f"frame {i} of the history (the centroids after step {i})", atol=1e-6, rtol=1e-6)


def test_frames_do_not_share_memory(submission, device):
    history, _ = run(submission, device)
    for i in range(len(history)):
        for j in range(i + 1, len(history)):
            if np.shares_memory(history[i], history[j]):
                fail(f"frames {i + 1} and {j + 1} of the history are the same memory: " + FIX)


def test_frames_keep_the_points_dtype(submission, device):
    history, expected = run(submission, device, torch.float32)  # run() checks each frame's type and dtype
    for i, (frame, want) in enumerate(zip(history, expected), start=1):
        if frame.shape != tuple(want.shape):
            fail(f"frame {i} of the history of float32 points has shape {frame.shape}, expected {tuple(want.shape)} "
                 "(k centroids of D coordinates).")
