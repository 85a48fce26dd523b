"""Grader for pinned_loader: batches bound for an accelerator come out of the DataLoader pinned
(pin_memory=True) and are copied with non_blocking=True. Every copy from the CPU to the device is recorded
(its source pinned or not, blocking or not) by a dispatch mode, the same way on CUDA and on the simulator;
the CPU leg checks the values, and that the loader does not pin, as there is nothing to pin for there.
device_batches must not make the host wait for the device (no copy back, no read of a device value, no
synchronize()), or nothing overlaps."""

import random

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from grader.guard import audit
from grader.engine.expect import expect_device, fail, measure, running

aten = torch.ops.aten
PIN = ("build the DataLoader with pin_memory=True when the data goes to an accelerator, so that its batches "
       "are in pinned memory")


class HostToDeviceCopies(TorchDispatchMode):
    """Records each copy from the CPU to a device: (source pinned?, non_blocking?, bytes)."""

    def __init__(self):
        super().__init__()
        self.copies = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            if func is aten._to_copy.default:
                src, dst, blocking = args[0], kwargs.get("device"), not kwargs.get("non_blocking", False)
            elif func is aten.copy_.default:
                src, dst = args[1], args[0].device
                blocking = not (args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
            else:
                src = None
            if (src is not None and dst is not None and isinstance(src, torch.Tensor) and src.device.type == "cpu"
                    and torch.device(dst).type != "cpu"):
                self.copies.append((bool(src.is_pinned()), blocking, src.numel() * src.element_size()))
        except Exception:  # recording must never change what the learner's code does
            pass
        return func(*args, **kwargs)


audit.CHECK_MODES.add(HostToDeviceCopies)  # the grader's own mode, entered around learner code


def data():
    n, f = random.randint(150, 260), random.randint(3, 9)
    batch_size = random.choice([32, 40, 48, 56])  # never 64, make_loader's default: a batch_size ignored shows
    return torch.randn(n, f), torch.randint(0, 10, (n,)), batch_size


def loader_for(submission, device, features, labels, batch_size):
    with running(f"make_loader(features, labels, {str(device)!r}, batch_size={batch_size})", submission):
        return submission.make_loader(features, labels, device, batch_size)


def all_batches(submission, device, loader):
    with running(f"device_batches(loader, {str(device)!r})", submission):
        return [tuple(b) for b in submission.device_batches(loader, device)]


def test_batches_arrive_on_the_device_in_order(submission, device):
    features, labels, bs = data()
    batches = all_batches(submission, device, loader_for(submission, device, features, labels, bs))
    for i, batch in enumerate(batches):
        if len(batch) != 2:
            fail(f"device_batches should yield (x, y) pairs, but batch {i} has {len(batch)} entries.")
        expect_device(batch[0], device, f"x of batch {i}", "copy each batch to the device in device_batches.")
        expect_device(batch[1], device, f"y of batch {i}", "copy the labels to the device too.")
        for name, got, source in (("x", batch[0], features), ("y", batch[1], labels)):
            if got.dtype != source.dtype:
                fail(f"{name} of batch {i} is {str(got.dtype).removeprefix('torch.')}, but the "
                     f"{'features' if name == 'x' else 'labels'} are {str(source.dtype).removeprefix('torch.')}: "
                     "copy each batch without converting it (the model and the loss expect the data's dtypes).")
    sizes = [len(x) for x, _ in batches]
    expected = [min(bs, len(features) - start) for start in range(0, len(features), bs)]
    if sizes != expected:
        fail(f"the loader made batches of {sorted(set(sizes), reverse=True)} rows for batch_size={bs} and "
             f"{len(features)} examples: build the DataLoader with the batch_size make_loader is given.")
    xs = torch.cat([x.cpu() for x, _ in batches]) if batches else torch.empty(0)
    ys = torch.cat([y.cpu() for _, y in batches]) if batches else torch.empty(0)
    if not (torch.equal(xs, features) and torch.equal(ys, labels)):
        fail(f"the batches of an epoch, put together, are not features and labels in order (batch_size={bs}, "
             f"{len(features)} examples): keep the loader's order (no shuffle) and copy each batch unchanged.")


def test_loader_returns_pinned_batches(submission, device):
    features, labels, bs = data()
    loader = loader_for(submission, device, features, labels, bs)
    if device.type == "cpu":
        return not_pinned_for_the_cpu(submission, loader)
    with running("next(iter(loader))", submission):
        x, y = next(iter(loader))
    if x.is_pinned() and y.is_pinned():
        return  # by pin_memory=True or by a collate_fn that pins: either way the copies can be queued
    if not getattr(loader, "pin_memory", False):
        fail(f"the DataLoader returned by make_loader has pin_memory={getattr(loader, 'pin_memory', None)}: its "
             f"batches are in pageable memory, and a copy to {device} from there cannot run asynchronously. "
             f"To fix it, {PIN}.")
    fail(f"the batches of make_loader's DataLoader are not in pinned memory: {PIN}.")


def not_pinned_for_the_cpu(submission, loader):
    """The docstring asks for pinned batches only when the data goes to an accelerator: for the CPU there is
    nothing to pin for, and pinning takes page-locked memory from the system and copies every batch once more
    (without an accelerator, the DataLoader only warns). Asked of the loader's setting, so that it fails alike
    on a machine without an accelerator, where a loader pins nothing whatever it is told."""
    cpu_only = ("make_loader(features, labels, 'cpu') built a DataLoader that pins its batches, though the data "
                "stays on the CPU: pin only when the data goes to an accelerator, as the docstring asks "
                "(pin_memory=torch.device(device).type != \"cpu\"). For the CPU, pinned memory gains nothing and "
                "takes page-locked memory from the whole system.")
    if getattr(loader, "pin_memory", False):
        fail(cpu_only)
    if torch.accelerator.is_available():  # a collate_fn that pins: only where pinning is possible at all
        with running("next(iter(loader))", submission):
            batch = next(iter(loader))
        if any(isinstance(t, torch.Tensor) and t.is_pinned() for t in batch):
            fail(cpu_only)


def test_copies_are_queued_from_pinned_memory(submission, device):
    features, labels, bs = data()
    loader = loader_for(submission, device, features, labels, bs)
    log = HostToDeviceCopies()
    with log, measure(device) as m:
        all_batches(submission, device, loader)
    if device.type == "cpu":
        return
    n = len(log.copies)
    pageable = sum(1 for pinned, _, _ in log.copies if not pinned)
    blocking = sum(1 for _, blocks, _ in log.copies if blocks)
    if not n:
        fail(f"device_batches made no copy from the CPU to {device}: the batches must come from the loader, "
             "on the CPU, and be copied once each.")
    if pageable:
        fail(f"{pageable} of the {n} copies to {device} in one epoch read pageable (not pinned) memory, so "
             f"non_blocking=True could not make them asynchronous. To fix it, {PIN}.")
    if blocking:
        fail(f"{blocking} of the {n} copies to {device} in one epoch were blocking: Python waits for each. Copy "
             "each tensor of the batch with .to(device, non_blocking=True).")
    if m.waits:
        fail(f"device_batches made {m.describe_waits()} in one epoch: Python waits for {device} each time, so "
             "copies and work cannot overlap. The device runs a stream's copies and kernels in order: a batch "
             "copied with non_blocking=True is ready for the work queued after it, without a synchronize().")
