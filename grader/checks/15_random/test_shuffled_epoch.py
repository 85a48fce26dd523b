"""Grader for shuffled_epoch: the shuffle's generator is a CPU generator seeded with `seed`; the batches go to the
device; every example once, in an order set by the seed alone, without touching the global random streams."""

import torch

from grader.engine.expect import canonical, fail, running

EXPLAIN = ("the DataLoader draws its shuffle on the CPU (its sampler calls torch.randperm there), so its "
           "generator must be a CPU generator, torch.Generator(), whatever device the batches go to.")


def data():
    n = int(torch.randint(45, 70, ()))
    features = torch.randn(n, 3)
    features[:, 0] = torch.arange(n, dtype=torch.float32)  # each row says which example it is
    labels = torch.arange(n) * 7 % 5
    return features, labels


def call(submission, features, labels, batch_size, seed, device):
    what = f"epoch_batches(features, labels, {batch_size}, seed={seed}, device={str(device)!r})"
    with running(what, submission, explain_device_error=EXPLAIN):
        batches = submission.epoch_batches(features, labels, batch_size, seed, device)
    try:
        batches = list(batches)
    except TypeError:
        fail(f"{what} should return a list of (x, y) batches, got {type(batches).__name__}.")
    order = []
    for i, batch in enumerate(batches):
        if not (isinstance(batch, (tuple, list)) and len(batch) == 2
                and all(isinstance(t, torch.Tensor) for t in batch)):
            fail(f"{what}: batch {i} should be a pair (x, y) of tensors.")
        x, y = batch
        for name, t in (("x", x), ("y", y)):
            if canonical(t.device) != canonical(device):
                fail(f"{what}: batch {i}'s {name} is on {t.device}, but the batches go to {device}.")
        last = i == len(batches) - 1
        if x.shape[0] != y.shape[0] or x.shape[0] > batch_size or (not last and x.shape[0] != batch_size):
            fail(f"{what}: batch {i} holds {x.shape[0]} rows and {y.shape[0]} labels: each batch holds batch_size "
                 f"({batch_size}) examples, the last one possibly fewer.")
        order += x[:, 0].cpu().long().tolist()
        expected_y = labels[x[:, 0].cpu().long()]
        if not torch.equal(y.cpu(), expected_y):
            fail(f"{what}: batch {i}'s labels do not belong to its rows: keep each example's label with it.")
    if sorted(order) != list(range(features.shape[0])):
        fail(f"{what} did not hold every example exactly once ({len(order)} rows for {features.shape[0]} "
             "examples).")
    return order


def test_puts_every_batch_on_the_device(submission, device):
    features, labels = data()
    call(submission, features, labels, int(torch.randint(5, 9, ())), int(torch.randint(0, 2**31, ())), device)


def test_the_order_is_set_by_the_seed(submission, device):
    features, labels = data()
    size, seed = int(torch.randint(5, 9, ())), int(torch.randint(0, 2**31, ()))
    first = call(submission, features, labels, size, seed, device)
    torch.rand(3)  # the program's own random streams move on between the two calls
    again = call(submission, features, labels, size, seed, device)
    if first != again:
        fail(f"epoch_batches with seed={seed} gave another order the second time: the shuffle must come from a "
             "generator seeded with `seed` on every call (a shuffle without generator= draws a new order each "
             "time).")
    other = call(submission, features, labels, size, seed + 1, device)
    if other == first:
        fail(f"epoch_batches gave the same order for seeds {seed} and {seed + 1}: seed the shuffle's generator "
             "with `seed`.")
    if first == sorted(first):
        fail("epoch_batches did not shuffle: the batches come in the data set's order.")


def test_leaves_the_global_random_streams_alone(submission, device):
    features, labels = data()
    states = [torch.get_rng_state()] + ([torch.get_device_module(device).get_rng_state(device)]
                                        if device.type != "cpu" else [])
    call(submission, features, labels, 6, 17, device)
    after = [torch.get_rng_state()] + ([torch.get_device_module(device).get_rng_state(device)]
                                       if device.type != "cpu" else [])
    if not all(torch.equal(a, b) for a, b in zip(states, after)):
        fail("epoch_batches changed the global random stream: torch.manual_seed, a shuffle drawn without a "
             "generator of its own, or a DataLoader without generator=, which draws its workers' base seed from the "
             "CPU's global generator at the start of every epoch (even with num_workers=0 and a sampler that has a "
             "generator). The rest of the program's randomness would then repeat or depend on the data order. Give "
             "the DataLoader itself a CPU generator of its own, seeded with `seed`: DataLoader(..., generator=g).")
