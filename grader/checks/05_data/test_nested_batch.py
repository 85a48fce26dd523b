"""Grader for nested_batch: to_device must move every tensor of a nested batch (dicts, lists, tuples at any
depth) to the device, values and dtypes unchanged, and leave everything else as it was."""

import copy
import random

import torch

from grader.expect import expect_device, fail, running

FIX = ("to_device must recurse into lists, tuples and dicts (call itself on every entry), so that tensors at "
       "any depth reach the device.")
OTHER_LEAVES = ["shard-03.txt", "", 41, 0, -7, 2.5, None, True]


def random_tensor():
    shape = tuple(random.randint(1, 4) for _ in range(random.randint(0, 3)))
    kind = random.choice(["float", "long", "bool"])
    if kind == "float":
        return torch.randn(shape)
    if kind == "long":
        return torch.randint(-100, 100, shape)
    return torch.rand(shape) > 0.5


def random_tree(depth):
    """A nested batch with at least one tensor below the top level and some non-tensor leaves."""
    if depth == 0:
        return random_tensor() if random.random() < 0.7 else random.choice(OTHER_LEAVES)
    kind = random.choice(["dict", "list", "tuple"])
    children = [random_tree(depth - 1 if random.random() < 0.8 else 0) for _ in range(random.randint(2, 4))]
    children.append(random_tree(depth - 1))
    if depth >= 2:
        children.append(random_tensor())
    random.shuffle(children)
    if kind == "dict":
        return {f"k{i}_{random.randint(0, 99)}": child for i, child in enumerate(children)}
    return children if kind == "list" else tuple(children)


def realistic_batch():
    B, T = random.randint(2, 5), random.randint(3, 8)
    return {
        "ids": torch.randint(0, 1000, (B, T)),
        "masks": [torch.rand(B, T) > 0.2, torch.rand(B, T) > 0.5],
        "labels": (torch.randint(0, 5, (B,)), torch.rand(B)),
        "meta": {"source": f"shard-{random.randint(0, 99):02d}.txt", "step": random.randint(0, 999)},
    }


def move(submission, batch, device, what):
    with running(f"to_device({what}, {str(device)!r})", submission):
        return submission.to_device(batch, device)


def compare(moved, original, device, path):
    """Walk both trees together; fail at the first difference, naming where it is."""
    if isinstance(original, torch.Tensor):
        if not isinstance(moved, torch.Tensor):
            fail(f"{path} was a tensor and came back as a {type(moved).__name__}.")
        expect_device(moved, device, path, FIX)
        if moved.dtype != original.dtype or moved.shape != original.shape:
            fail(f"{path} came back as {moved.dtype} {tuple(moved.shape)}, but it was {original.dtype} "
                 f"{tuple(original.shape)}: move tensors without converting them.")
        if not torch.equal(moved.cpu(), original):
            fail(f"{path} came back with other values: moving a tensor must not change it.")
        return
    if type(moved) is not type(original):
        fail(f"{path} was a {type(original).__name__} and came back as a {type(moved).__name__}: keep each "
             "container's type (a tuple stays a tuple) and leave values that are not tensors as they are.")
    if isinstance(original, dict):
        if list(moved) != list(original):
            fail(f"{path} has keys {list(moved)} after to_device, but {list(original)} before.")
        for key in original:
            compare(moved[key], original[key], device, f"{path}[{key!r}]")
    elif isinstance(original, (list, tuple)):
        if len(moved) != len(original):
            fail(f"{path} has {len(moved)} entries after to_device, but {len(original)} before.")
        for i, (m, o) in enumerate(zip(moved, original)):
            compare(m, o, device, f"{path}[{i}]")
    elif moved != original:
        fail(f"{path} was {original!r} and came back as {moved!r}: leave values that are not tensors as they are.")


def test_moves_a_realistic_batch(submission, device):
    batch = realistic_batch()
    before = copy.deepcopy(batch)  # what the batch held: a fix may move it in place, as the spec allows
    compare(move(submission, batch, device, "batch"), before, device, "batch")


def test_moves_every_tensor_at_any_depth(submission, device):
    for _ in range(5):
        batch = random_tree(random.randint(2, 3))
        before = copy.deepcopy(batch)
        compare(move(submission, batch, device, "a nested batch"), before, device, "batch")


def test_moves_a_lone_tensor_and_leaves_other_values(submission, device):
    t = random_tensor()
    compare(move(submission, t, device, "a tensor"), t, device, "to_device(tensor)")
    for value in OTHER_LEAVES:
        compare(move(submission, value, device, repr(value)), value, device, f"to_device({value!r})")
