"""Grader for feature_cache: release() must drop the references; empty_cache() alone frees no live tensor.

Checked on every leg with fresh tensors: after release() every cached tensor has been freed (a weak
reference to each is dead: nothing holds it any more, on the CPU as on a device), get() finds nothing, the
cache can be filled again, get() of a key never cached gives None (as promised), and release() copied nothing to
the host. On an accelerator, the device's
memory_allocated() is back to its value before the features were cached (torch.cuda and the simulator's
module both keep it)."""

import random
import weakref

import torch

from grader.engine.expect import GradeFailure, fail, measure, running

FIX = ("the cache still references the tensors, so their memory stays allocated: empty_cache() only returns "
       "cached blocks that no tensor uses. Drop the references in release() (self.store.clear()).")


def fill(submission, device, n):
    with running("FeatureCache()", submission):
        cache = submission.FeatureCache()
    keys = [f"img-{random.randint(0, 10**6)}-{i}" for i in range(n)]
    refs = []
    for key in keys:
        t = torch.randn(random.randint(64, 128), 256, device=device)
        refs.append(weakref.ref(t))
        with running(f"cache.put({key!r}, features)", submission):
            cache.put(key, t)
        del t
    return cache, keys, refs


def get(submission, cache, key):
    try:
        with running(f"cache.get({key!r})", submission):
            return cache.get(key)
    except GradeFailure as exc:
        fail(f"{exc}\nThe docstring promises None for a key that is not cached (dict.get gives it).")


def release(submission, cache, device):
    with measure(device) as m:
        with running("cache.release()", submission):
            cache.release()
    return m


def test_release_frees_the_tensors(submission, device):
    cache, keys, refs = fill(submission, device, random.randint(3, 6))
    release(submission, cache, device)
    alive = sum(r() is not None for r in refs)
    if alive:
        fail(f"after cache.release(), {alive} of the {len(refs)} cached tensors are still alive on {device}: {FIX}")
    for key in keys:
        if get(submission, cache, key) is not None:
            fail(f"cache.get({key!r}) still finds the features after release(): the cache should be empty.")


def test_device_memory_goes_back(submission, device):
    if device.type == "cpu":
        return  # the CPU has no allocator counters; the weak references above cover this leg
    mod = torch.get_device_module(device)
    before = mod.memory_allocated(device)
    cache, _, _ = fill(submission, device, random.randint(3, 6))
    held = mod.memory_allocated(device) - before
    m = release(submission, cache, device)
    left = mod.memory_allocated(device) - before
    if left >= 32 * 2**10:  # every feature tensor is 64 KiB or more; a few bytes of other state may remain
        fail(f"the cached features took {held / 2**20:.2f} MiB of {device} memory; after release() "
             f"{left / 2**20:.2f} MiB are still allocated: {FIX}")
    if m.d2h:
        fail(f"release() made {m.describe_round_trips()}: the features are no longer needed, so drop them "
             "instead of moving them to the host.")


def test_get_finds_what_was_put_and_none_otherwise(submission, device):
    cache, keys, refs = fill(submission, device, 3)
    for key, ref in zip(keys, refs):
        with running(f"cache.get({key!r})", submission):
            got = cache.get(key)
        if got is not ref():
            fail(f"cache.get({key!r}) did not return the tensor cache.put stored under that key.")
    got = get(submission, cache, "img-never-cached")
    if got is not None:
        fail(f"cache.get of a key never cached returned {type(got).__name__}; the docstring promises None.")


def test_cache_works_after_release(submission, device):
    cache, _, _ = fill(submission, device, 2)
    release(submission, cache, device)
    t = torch.randn(8, 4, device=device)
    with running("cache.put('again', t) after release()", submission):
        cache.put("again", t)
    with running("cache.get('again')", submission):
        got = cache.get("again")
    if got is not t:
        fail("after release(), cache.put then cache.get did not return the tensor: the cache must be usable again.")
