"""The simulated accelerator's memory model: CUDA's caching allocator (c10/cuda/CUDACachingAllocator.cpp),
rule for rule, so that ``memory_allocated`` / ``memory_reserved`` / ``empty_cache`` / out-of-memory
behave as on a GPU.

* Every request is rounded up to a multiple of 512 bytes (at least 512).
* Requests of at most 1 MiB come from the *small pool*, whose segments are 2 MiB; larger ones from the
  *large pool*: a 20 MiB segment for requests below 10 MiB, otherwise a segment of the request rounded up
  to a multiple of 2 MiB.
* A free block is found best-fit (smallest size, then lowest address).  A block bigger than the request
  is split when the rest is at least 512 bytes (small pool) or more than 1 MiB (large pool).
* A freed block stays reserved and merges with free neighbours of its segment; ``empty_cache()`` returns
  every segment that is entirely free.
* When a new segment would exceed the device's capacity, the cached free segments are released and the
  request is retried (``num_alloc_retries``); if it still does not fit, ``torch.OutOfMemoryError`` with
  CUDA's message (device type renamed).

Sizes are exact, so tests can assert them (see ``round_size`` and ``allocation_size``).
Not modelled: CUDA's context and library workspaces (cuBLAS/cuDNN allocate theirs from the allocator on a
GPU, e.g. about 32 MiB at the first matmul of a thread on Hopper), ``expandable_segments``.

Streams: each segment belongs to the stream it was allocated for, and only that stream's requests reuse its
free blocks (CUDA's BlockPool is searched by stream). A freed block is free at once, whatever other stream
still uses it, unless ``record_stream`` named that stream: then it waits until that stream's work at the free
has ended (races.py keeps those frees, as CUDA's allocator keeps events).
"""

from __future__ import annotations

import bisect
import os
import re

KiB = 1024
MiB = 1024 * 1024
GiB = 1024 * MiB

MIN_BLOCK = 512  # kMinBlockSize
SMALL_SIZE = 1 * MiB  # kSmallSize: largest request of the small pool
SMALL_BUFFER = 2 * MiB  # kSmallBuffer: segment size of the small pool
LARGE_BUFFER = 20 * MiB  # kLargeBuffer: segment for requests in (1 MiB, 10 MiB)
MIN_LARGE_ALLOC = 10 * MiB  # kMinLargeAlloc
ROUND_LARGE = 2 * MiB  # kRoundLarge

DEFAULT_CAPACITY = 80 * GiB
CAPACITY_ENV = "GRADER_SIM_MEMORY"


def round_size(n: int) -> int:
    """Block size of a request of ``n`` bytes (0 stays 0: CUDA allocates nothing for it)."""
    if n <= 0:
        return 0
    if n < MIN_BLOCK:
        return MIN_BLOCK
    return MIN_BLOCK * ((n + MIN_BLOCK - 1) // MIN_BLOCK)


round_block = round_size  # older name


def allocation_size(size: int) -> int:
    """Segment size requested from the driver for a (rounded) block of ``size`` bytes."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)


def parse_size(text) -> int:
    """``"80GiB"``, ``"512 MiB"``, ``"1.5G"``, ``"1000000"`` -> bytes."""
    if isinstance(text, (int, float)):
        return int(text)
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kmgt]?)(i?b?)\s*", str(text), re.I)
    if not m:
        raise ValueError(f"not a memory size: {text!r} (use e.g. 80GiB, 512MiB or a number of bytes)")
    unit = {"": 1, "k": KiB, "m": MiB, "g": GiB, "t": 1024 * GiB}[m.group(2).lower()]
    return int(float(m.group(1)) * unit)


def default_capacity() -> int:
    env = os.environ.get(CAPACITY_ENV)
    return parse_size(env) if env else DEFAULT_CAPACITY


def format_size(size: int) -> str:
    """CUDA's format_size (CUDACachingAllocator.cpp)."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= MiB:
        return f"{size / KiB:.2f} KiB"
    if size <= GiB:
        return f"{size / MiB:.2f} MiB"
    return f"{size / GiB:.2f} GiB"


class Block:
    __slots__ = ("size", "addr", "seg", "prev", "next", "allocated", "small", "requested", "stream", "held",
                 "__weakref__")

    def __init__(self, size, addr, seg, small, stream=0):
        self.stream = stream  # the stream its segment was allocated for: only that stream's requests reuse it
        self.held = False  # freed, but kept from reuse until the streams record_stream named are done (hold)
        self.size = size
        self.addr = addr
        self.seg = seg
        self.prev = None
        self.next = None
        self.allocated = False
        self.small = small
        self.requested = 0

    def __repr__(self):
        return f"Block({self.size} B at {self.addr:#x}, {'small' if self.small else 'large'}, {'used' if self.allocated else 'free'})"


class Stat:
    __slots__ = ("current", "peak", "allocated", "freed")

    def __init__(self):
        self.current = self.peak = self.allocated = self.freed = 0

    def add(self, n):
        if n > 0:
            self.allocated += n
        else:
            self.freed -= n
        self.current += n
        if self.current > self.peak:
            self.peak = self.current

    def as_dict(self):
        return {"current": self.current, "peak": self.peak, "allocated": self.allocated, "freed": self.freed}


# "active" / "active_bytes" equal "allocation" / "allocated_bytes" here (no stream keeps a freed block
# busy), so they are reported from those.
# "inactive_split" / "inactive_split_bytes" are counted from the blocks when the stats are read.
STAT_NAMES = ("allocation", "allocated_bytes", "segment", "reserved_bytes", "requested_bytes")


class CachingAllocator:
    def __init__(self, device_index: int = 0, capacity: int | None = None, device_name: str = "sim"):
        self.device_index = device_index
        self.device_name = device_name
        self.capacity = default_capacity() if capacity is None else int(capacity)
        self.allowed = None  # torch.cuda.set_per_process_memory_fraction: bytes this process may reserve
        self.free_small: list = []  # sorted (size, addr, block)
        self.free_large: list = []
        self.segments: list[Block] = []  # first block of each segment
        self._next_addr = (1 << 32) + (device_index << 40)  # a range per device, as CUDA's unified addresses
        self.stats = {name: [Stat(), Stat(), Stat()] for name in STAT_NAMES}  # all, small, large
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_device_alloc = 0
        self.num_device_free = 0

    # --- counters read by torch.sim.memory_* -------------------------------------------------
    @property
    def allocated(self):
        return self.stats["allocated_bytes"][0].current

    @property
    def reserved(self):
        return self.stats["reserved_bytes"][0].current

    @property
    def peak(self):
        return self.stats["allocated_bytes"][0].peak

    @property
    def peak_reserved(self):
        return self.stats["reserved_bytes"][0].peak

    @property
    def n_alloc(self):
        return self.stats["allocation"][0].allocated

    @property
    def n_free(self):
        return self.stats["allocation"][0].freed

    def _stat(self, name, small, n):
        # hot path (twice per tensor): the "all" and the pool's Stat, inlined
        arr = self.stats[name]
        a, b = arr[0], arr[1 if small else 2]
        if n > 0:
            a.allocated += n
            b.allocated += n
        else:
            a.freed -= n
            b.freed -= n
        a.current += n
        b.current += n
        if a.current > a.peak:
            a.peak = a.current
        if b.current > b.peak:
            b.peak = b.current

    def _account(self, small, sign, size, requested):
        """allocation / allocated_bytes / requested_bytes of one block (the hot path), inlined."""
        st = self.stats
        p = 1 if small else 2
        for name, n in (("allocation", sign), ("allocated_bytes", sign * size), ("requested_bytes", sign * requested)):
            arr = st[name]
            a, b = arr[0], arr[p]
            if n > 0:
                a.allocated += n
                b.allocated += n
            else:
                a.freed -= n
                b.freed -= n
            a.current += n
            b.current += n
            if a.current > a.peak:
                a.peak = a.current
            if b.current > b.peak:
                b.peak = b.current

    # --- allocation --------------------------------------------------------------------------
    def alloc(self, nbytes: int, stream: int = 0):
        """Allocate a block for ``nbytes`` on stream ``stream`` (an id); returns the Block (None for 0 bytes)."""
        size = round_size(nbytes)
        if size == 0:
            return None
        small = size <= SMALL_SIZE
        pool = self.free_small if small else self.free_large
        block = self._take_free(pool, size, stream)
        if block is None:
            seg_size = allocation_size(size)
            if not self._fits(seg_size):
                # CUDA frees its cached blocks and retries before giving up
                self.num_alloc_retries += 1
                self.empty_cache()
                if not self._fits(seg_size):
                    self.num_ooms += 1
                    raise self._oom(seg_size)
            block = self._new_segment(seg_size, small, stream)
        remaining = block.size - size
        if remaining >= MIN_BLOCK if small else remaining > SMALL_SIZE:
            rest = Block(remaining, block.addr + size, block.seg, small, block.stream)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            self._insert_free(rest)
        block.allocated = True
        block.requested = nbytes
        self._account(small, 1, block.size, nbytes)
        return block

    def release(self, block) -> None:
        if block is None or not block.allocated:
            return
        block.allocated = False
        self._account(block.small, -1, block.size, block.requested)
        self._to_pool(block)

    def hold(self, block) -> None:
        """Free ``block`` (the counters say so at once, as CUDA's free() does) but keep it from reuse until
        ``unhold``: a block record_stream named other streams for, until their work at the free has ended."""
        if block is None or not block.allocated:
            return
        block.allocated = False
        block.held = True
        self._account(block.small, -1, block.size, block.requested)

    def unhold(self, block) -> None:
        if block is not None and block.held:
            block.held = False
            self._to_pool(block)

    def _to_pool(self, block) -> None:
        """Merge a free block with its free neighbours and make it available again."""
        for nb in (block.prev, block.next):
            if nb is not None and not nb.allocated and not nb.held:
                self._remove_free(nb)
                if nb is block.prev:
                    nb.size += block.size
                    nb.next = block.next
                    if block.next is not None:
                        block.next.prev = nb
                    block = nb
                else:
                    block.size += nb.size
                    block.next = nb.next
                    if nb.next is not None:
                        nb.next.prev = block
        self._insert_free(block)

    def empty_cache(self) -> None:
        """Return every entirely free segment to the (virtual) driver."""
        keep = []
        for first in self.segments:
            if not first.allocated and not first.held and first.next is None:
                self._remove_free(first)
                self._stat("segment", first.small, -1)
                self._stat("reserved_bytes", first.small, -first.size)
                self.num_device_free += 1
            else:
                keep.append(first)
        self.segments = keep

    # --- helpers -----------------------------------------------------------------------------
    def _new_segment(self, seg_size, small, stream=0):
        b = Block(seg_size, self._next_addr, None, small, stream)
        b.seg = b
        self._next_addr += seg_size
        self.segments.append(b)
        self._stat("segment", small, 1)
        self._stat("reserved_bytes", small, seg_size)
        self.num_device_alloc += 1
        return b

    def _take_free(self, pool, size, stream=0):
        # the smallest free block that fits, of a segment of this stream (CUDA's pools are per stream)
        i = bisect.bisect_left(pool, (size, -1))
        while i < len(pool):
            if pool[i][2].stream == stream:
                return pool.pop(i)[2]
            i += 1
        return None

    def _insert_free(self, block):
        pool = self.free_small if block.small else self.free_large
        bisect.insort(pool, (block.size, block.addr, block))

    def _remove_free(self, block):
        pool = self.free_small if block.small else self.free_large
        i = bisect.bisect_left(pool, (block.size, block.addr))
        if i < len(pool) and pool[i][2] is block:
            pool.pop(i)

    def blocks(self):
        """(segment size, [(block size, allocated), ...]) per segment, in address order."""
        out = []
        for first in self.segments:
            b, seg, total = first, [], 0
            while b is not None:
                seg.append((b.size, b.allocated))
                total += b.size
                b = b.next
            out.append((total, seg))
        return out

    def _fits(self, seg_size):
        limit = self.capacity if self.allowed is None else min(self.capacity, self.allowed)
        return self.reserved + seg_size <= limit

    def mem_get_info(self):
        return max(0, self.capacity - self.reserved), self.capacity

    def _oom(self, alloc_size):
        import torch

        free, total = self.mem_get_info()
        dev = self.device_name
        msg = (
            f"{dev.upper()} out of memory. Tried to allocate {format_size(alloc_size)}. GPU {self.device_index} "
            f"has a total capacity of {format_size(total)} of which {format_size(free)} is free. "
            f"Including non-PyTorch memory, this process has {format_size(self.reserved)} memory in use. "
            + (f"{format_size(self.allowed)} allowed; " if self.allowed is not None else "")
            + f"Of the allocated memory {format_size(self.allocated)} is allocated by PyTorch, and "
            f"{format_size(self.reserved - self.allocated)} is reserved by PyTorch but unallocated. If reserved "
            f"but unallocated memory is large try setting PYTORCH_{dev.upper()}_ALLOC_CONF=expandable_segments:True "
            "to avoid fragmentation.  See documentation for Memory Management  "
            f"(https://docs.pytorch.org/docs/stable/notes/{dev}.html#optimizing-memory-usage-with-pytorch-{dev}-alloc-conf)"
        )
        return torch.OutOfMemoryError(msg)

    # --- statistics --------------------------------------------------------------------------
    def reset_peak(self):
        for arr in self.stats.values():
            for s in arr:
                s.peak = s.current

    def reset_accumulated(self):
        for arr in self.stats.values():
            for s in arr:
                s.allocated = s.freed = 0
        self.num_alloc_retries = self.num_ooms = self.num_device_alloc = self.num_device_free = 0

    def nested_stats(self) -> dict:
        """The dict torch._C._accelerator_getDeviceStats returns (torch.accelerator.memory_stats flattens it)."""
        out = {
            name: {pool: s.as_dict() for pool, s in zip(("all", "small_pool", "large_pool"), arr)}
            for name, arr in self.stats.items()
        }
        out["active"] = out["allocation"]
        out["active_bytes"] = out["allocated_bytes"]
        split = {"all": [0, 0], "small_pool": [0, 0], "large_pool": [0, 0]}
        for first in self.segments:  # free blocks of segments that are in use (cannot be released)
            b = first
            while b is not None:
                if not b.allocated and not b.held and (b.prev is not None or b.next is not None):
                    for pool in ("all", "small_pool" if b.small else "large_pool"):
                        split[pool][0] += 1
                        split[pool][1] += b.size
                b = b.next
        for k, name in ((0, "inactive_split"), (1, "inactive_split_bytes")):
            out[name] = {pool: {"current": v[k], "peak": v[k], "allocated": 0, "freed": 0} for pool, v in split.items()}
        out.update(num_alloc_retries=self.num_alloc_retries, num_ooms=self.num_ooms,
                   num_sync_all_streams=0, num_device_alloc=self.num_device_alloc,
                   num_device_free=self.num_device_free, max_split_size=-1,
                   oversize_allocations={"current": 0, "peak": 0, "allocated": 0, "freed": 0},
                   oversize_segments={"current": 0, "peak": 0, "allocated": 0, "freed": 0})
        return out

    def flat_stats(self) -> dict:
        """torch.cuda.memory_stats()-style flat, sorted dict."""
        flat = {}

        def walk(prefix, v):
            if isinstance(v, dict):
                for k, x in v.items():
                    walk(f"{prefix}.{k}" if prefix else k, x)
            else:
                flat[prefix] = v

        walk("", self.nested_stats())
        return dict(sorted(flat.items()))
