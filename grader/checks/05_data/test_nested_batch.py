"""Grader for nested_batch: to_device must move every tensor of a nested batch (dicts, lists, tuples at any
depth) to the device, values and dtypes unchanged, and leave everything else as it was.

The whole contract: tensors of every dtype a batch carries (float16, bfloat16, float64, integers and booleans,
not only float32: a fix that makes floats float32 on the way shows), containers nested deeper than any fixed
number of levels, empty containers, and a lone tensor or value. A tensor found on another device is explained
by what happened to it: left on the CPU below the top level (the helper must recurse), left on the CPU at the
top level (not moved at all), or moved to the right kind of device but another index (the index was lost)."""

import copy
import random

import torch

from grader.engine.expect import canonical, expect_device, expect_tensor, fail, running

FIX = ("to_device must recurse into lists, tuples and dicts (call itself on every entry), so that tensors at "
       "any depth reach the device.")
OTHER_LEAVES = ["shard-03.txt", "", 41, 0, -7, 2.5, None, True]
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
INTEGERS = [torch.int64, torch.int32, torch.uint8]


def random_tensor(dtype=None):
    shape = tuple(random.randint(1, 4) for _ in range(random.randint(0, 3)))
    dtype = dtype or random.choice(FLOATS + INTEGERS + [torch.bool])
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randint(0, 100, shape).to(dtype)


def empty_container():
    return random.choice([{}, [], ()])


def random_tree(depth):
    """A nested batch with at least one tensor below the top level and some non-tensor leaves."""
    if depth == 0:
        roll = random.random()
        return random_tensor() if roll < 0.7 else empty_container() if roll < 0.75 else random.choice(OTHER_LEAVES)
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


def deep_batch(depth):
    """An int64 tensor `depth` containers down, each kind (dict, list, tuple) in every three levels, beside a
    float32 tensor at the top: the same kinds and dtypes on every draw, so a wrong fix fails here every time."""
    kinds = [kind for _ in range(3) for kind in random.sample(["dict", "list", "tuple"], 3)][:depth]
    batch = random_tensor(torch.int64)
    for kind in kinds:
        batch = {"inner": batch} if kind == "dict" else [batch] if kind == "list" else (batch,)
    return {"top": random_tensor(torch.float32), "nested": batch}


def current_index() -> int | None:
    try:
        return torch.accelerator.current_device_index()
    except Exception:  # no accelerator: no current device to blame
        return None


def expect_moved(moved, device, path, depth, submission):
    """A tensor on the wrong device, explained by where it is and where it went."""
    expect_tensor(moved, path)
    if canonical(moved.device) == canonical(device):
        return
    wrong = f"{path} is on {moved.device}, but it should be on {device}"
    if moved.device.type == device.type:
        if moved.device.index == current_index():
            fail(f"{wrong}: the right kind of device, another index. {moved.device} is the current device: a "
                 "device without its index (.to(device.type), .cuda(), a device name such as 'cuda') goes there, "
                 "as does an index written in the code ('cuda:0') that happens to be the current one. Move every "
                 "tensor with .to(device), the device as given, index included.")
        fail(f"{wrong}: the right kind of device, another index, and not the current device: an index chosen in "
             "the code (a device name such as 'cuda:0' written out?). Move every tensor with .to(device), the "
             "device as given.")
    if depth <= 1:
        where = "the lone tensor" if depth == 0 else "an entry at the top of the batch"
        fail(f"{wrong}: {where} was not moved at all. Every tensor of the batch, at the top as below it, goes to "
             "the device with .to(device).")
    probe = torch.zeros(2)
    if canonical(move(submission, probe, device, "a tensor").device) != canonical(device):
        fail(f"{wrong}, and to_device(a tensor, {str(device)!r}) returns the tensor where it was: the recursion "
             "reaches every tensor of the batch, so the case of a tensor is where it must be moved, with "
             ".to(device).")
    expect_device(moved, device, path, FIX)


def compare(submission, moved, original, device, path, depth=0):
    """Walk both trees together; fail at the first difference, naming where it is."""
    if isinstance(original, torch.Tensor):
        if not isinstance(moved, torch.Tensor):
            fail(f"{path} was a tensor and came back as a {type(moved).__name__}.")
        expect_moved(moved, device, path, depth, submission)
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
            compare(submission, moved[key], original[key], device, f"{path}[{key!r}]", depth + 1)
    elif isinstance(original, (list, tuple)):
        if len(moved) != len(original):
            fail(f"{path} has {len(moved)} entries after to_device, but {len(original)} before.")
        for i, (m, o) in enumerate(zip(moved, original)):
            compare(submission, m, o, device, f"{path}[{i}]", depth + 1)
    elif moved != original:
        fail(f"{path} was {original!r} and came back as {moved!r}: leave values that are not tensors as they are.")


def test_moves_a_realistic_batch(submission, device):
    batch = realistic_batch()
    before = copy.deepcopy(batch)  # what the batch held: a fix may move it in place, as the spec allows
    moved = move(submission, batch, device, "batch")
    compare(submission, moved, before, device, "batch")


def test_moves_every_tensor_at_any_depth(submission, device):
    for _ in range(5):
        batch = random_tree(random.randint(2, 3))
        before = copy.deepcopy(batch)
        moved = move(submission, batch, device, "a nested batch")
        compare(submission, moved, before, device, "batch")


def test_keeps_every_dtype(submission, device):
    batch = {"floats": [random_tensor(dtype) for dtype in FLOATS],
             "integers": tuple(random_tensor(dtype) for dtype in INTEGERS), "mask": random_tensor(torch.bool)}
    before = copy.deepcopy(batch)
    moved = move(submission, batch, device, "a batch of every dtype")
    compare(submission, moved, before, device, "batch")


def test_moves_tensors_many_levels_down(submission, device):
    depth = random.randint(6, 9)  # every kind twice at least
    batch = deep_batch(depth)
    before = copy.deepcopy(batch)
    moved = move(submission, batch, device, f"a batch nested {depth} levels deep")
    compare(submission, moved, before, device, "batch")


def test_moves_a_lone_tensor_and_leaves_other_values(submission, device):
    for dtype in FLOATS + INTEGERS + [torch.bool]:  # every dtype, so a conversion fails here on every draw
        t = random_tensor(dtype)
        moved = move(submission, t, device, f"a {str(dtype).removeprefix('torch.')} tensor")
        compare(submission, moved, t, device, "to_device(tensor)")
    for value in OTHER_LEAVES:
        moved = move(submission, value, device, repr(value))
        compare(submission, moved, value, device, f"to_device({value!r})")
