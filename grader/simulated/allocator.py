"""The simulated accelerator's memory model: a caching allocator in the manner of CUDA's.

Sizes round up to 512-byte blocks; a freed block stays reserved and is reused for any request of at least
half its size, until empty_cache() hands the cached blocks back."""

from __future__ import annotations

import bisect


def round_block(n):
    return ((n + 511) // 512) * 512


class CachingAllocator:
    def __init__(self):
        self.allocated = 0
        self.reserved = 0
        self.peak = 0
        self.peak_reserved = 0
        self.free = []  # sorted block sizes kept reserved
        self.n_alloc = 0
        self.n_free = 0

    def alloc(self, nbytes):
        size = round_block(nbytes)
        if size == 0:
            return 0
        i = bisect.bisect_left(self.free, size)
        if i < len(self.free) and self.free[i] <= 2 * size:
            size = self.free.pop(i)  # reuse a cached block (possibly larger)
        else:
            self.reserved += size
            if self.reserved > self.peak_reserved:
                self.peak_reserved = self.reserved
        self.allocated += size
        self.n_alloc += 1
        if self.allocated > self.peak:
            self.peak = self.allocated
        return size

    def release(self, size):
        if size == 0:
            return
        self.allocated -= size
        self.n_free += 1
        bisect.insort(self.free, size)

    def empty_cache(self):
        self.reserved -= sum(self.free)
        self.free = []
