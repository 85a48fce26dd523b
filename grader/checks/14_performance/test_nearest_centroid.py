"""Grader for nearest_centroid: the assignment must be one batched computation on the device: the number of
kernels must not grow with the number of samples (compared between a batch of a few dozen rows and one of more
than a thousand, larger than any chunk), and nothing comes back to the CPU. float32 and float64 inputs."""

import random

import torch

from grader.engine.expect import expect_device, fail, measure, running


def draw(n, device, dtype=torch.float32):
    d, k = random.randint(3, 8), random.randint(3, 6)
    return torch.randn(n, d, dtype=dtype), torch.randn(k, d, dtype=dtype) * 2


def call(submission, x, c, device):
    with running(f"assign(x of shape {tuple(x.shape)}, centroids of shape {tuple(c.shape)})", submission):
        return submission.assign(x.to(device), c.to(device))


def check_assignment(out, x, c, device):
    expect_device(out, device, "the assignment", "compute it where x is.")
    if out.dtype != torch.int64 or out.shape != (x.shape[0],):
        fail(f"assign should return int64 indices of shape ({x.shape[0]},), got {out.dtype} {tuple(out.shape)}.")
    d = ((x[:, None] - c[None]) ** 2).sum(-1).double()
    got = out.cpu()
    if got.min() < 0 or got.max() >= c.shape[0]:
        fail("assign returned indices that are not centroid indices.")
    chosen = d[torch.arange(x.shape[0]), got]
    if not torch.all(chosen <= d.min(dim=1).values + 1e-4):
        fail("assign did not return the nearest centroid of every sample: the fix changed the result.")


def test_assigns_the_nearest_centroid(submission, device):
    for dtype in (torch.float32, torch.float64):  # "float tensor": float64 features too
        if dtype == torch.float64 and device.type == "mps":
            continue  # MPS has no float64
        x, c = draw(random.randint(30, 60), device, dtype)
        check_assignment(call(submission, x, c, device), x, c, device)


def test_kernels_do_not_grow_with_the_batch(submission, device):
    n = random.randint(30, 40)
    counts = []
    x_small, c = draw(n, device)  # the same centroids for both sizes: only the batch grows
    # A sample beside every centroid, in both batches: each centroid is the nearest of some sample in both, so
    # code whose work depends on which centroids win (a loop over centroids that skips idle ones) does the
    # same work for both sizes, on every draw.
    anchors = c + 1e-3 * torch.randn_like(c)
    # The large batch has more than a thousand rows: "whatever its size", so a loop over chunks of any size a learner
    # might pick (32, 256, 1024 rows) runs more kernels for it.
    large = random.randint(1100, 1400)
    batches = [torch.cat([x_small, anchors]), torch.cat([torch.randn(large, c.shape[1]), anchors])]
    for x in batches:
        with measure(device) as m:
            out = call(submission, x, c, device)
        check_assignment(out, x, c, device)
        counts.append(m.kernels)
    small, large = counts
    if large > small + 4:
        sizes = [len(x) for x in batches]
        fail(f"assign launched {small} operations on {device} for {sizes[0]} samples and {large} for {sizes[1]}: the "
             "work is "
             "done one sample at a time, in a Python loop, and each tiny kernel costs a launch. Compute the (N, K) "
             "matrix of distances in one batched expression (broadcast x[:, None, :] against centroids[None]) and "
             "take argmin over the centroids.")


def test_nothing_comes_back_to_the_cpu(submission, device):
    x, c = draw(random.randint(30, 60), device)
    with measure(device) as m:
        call(submission, x, c, device)
    if m.waits:
        fail(f"assign made {m.describe_waits()}: the distances and the argmin belong on {device}.")
