"""What the doctor can find, and the shape of one finding.

Each kind has a code (stable: SARIF rule ids, --json, the tests), a level ("error": the script fails or computes
wrong values; "warning": it runs but the device waits or copies for nothing; "note": fine here, breaks
elsewhere), a short title, and the book's section that explains it (page and heading, turned into a link by
grader.catalog.book_links, like an exercise's `explained_in`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Kind:
    code: str
    level: str
    title: str
    page: str
    heading: str  # the section's heading text, as written in book/<page>.md


KINDS = {k.code: k for k in [
    Kind("cuda-only", "note", "written for CUDA only", "mps-and-accelerators",
         "Choosing the device: from a chain of ifs to torch.accelerator"),
    Kind("device-mismatch", "error", "tensors on different devices in one operation", "device-mismatch",
         "Reading the error"),
    Kind("lost-index", "error", "tensors on two accelerators in one operation (a lost or wrong device index)", "multi-gpu", "The current device"),
    Kind("host-read-per-step", "warning", "Python reads a device value every step", "repeated-transfers",
         "Round trips inside loops"),
    Kind("sync-per-step", "warning", "an explicit synchronisation every step", "repeated-transfers",
         "Hidden synchronisations"),
    Kind("data-dependent-shape", "warning", "an operation whose output size depends on device data, every step",
         "repeated-transfers", "Hidden synchronisations"),
    Kind("helper-copied-per-step", "warning", "a tensor made on the CPU and copied to the device every step",
         "device-agnostic-training", "Creating helper tensors correctly"),
    Kind("pageable-non-blocking", "warning", "non_blocking=True from pageable memory (the copy waits anyway)",
         "data-loading", "non_blocking=True"),
    Kind("early-read", "error", "a non_blocking copy to the host read before it landed", "data-loading",
         "Reading a non-blocking copy too early"),
    Kind("float64-on-device", "warning", "float64 on the device (MPS cannot hold it)", "mps-and-accelerators",
         "No float64"),
    Kind("left-behind", "error", "model state left behind when the model moved", "models-and-buffers",
         "Plain tensor attributes are not moved"),
    Kind("optimizer-state-left-behind", "error", "optimizer state left on another device than its parameters",
         "device-agnostic-training", "Set-up: move the model, then create the optimizer"),
    Kind("memory-grows", "warning", "device memory held by one line grows every step", "memory", "Peak memory"),
    Kind("unsynced-timing", "warning", "a host clock stopped around device work that nothing waited for",
         "asynchrony", "Timing GPU code: the wrong way and the right way"),
    Kind("empty-cache-per-step", "warning", "empty_cache() in every iteration of a loop", "memory", "`empty_cache()`"),
    Kind("load-without-map-location", "warning", "torch.load of device tensors without map_location",
         "device-agnostic-training", "Checkpoints and `map_location`"),
    Kind("graph-kept", "warning", "an autograd graph carried from one iteration into the next", "memory",
         "Where the memory of a training step goes"),
    Kind("crash", "error", "the script stopped with an error", "debugging", "Reading the traceback"),
]}

LEVELS = ("error", "warning", "note")


@dataclass
class Finding:
    code: str
    message: str  # what happened, with counts, and what to change
    file: str | None = None
    line: int | None = None
    source: str = ""  # the learner's statement at `line`
    fix: str = ""  # the rewrite, where one is known (the device-agnostic form of a CUDA-only line)
    extra_lines: list[int] = field(default_factory=list)  # other lines of the same finding
    related: list[dict] = field(default_factory=list)  # {line, source, message}: a use, a move, a call followed

    @property
    def kind(self) -> Kind:
        return KINDS[self.code]

    @property
    def level(self) -> str:
        return self.kind.level

    def to_json(self) -> dict:
        from grader.doctor import links

        data = asdict(self)
        data.update(level=self.level, title=self.kind.title, section=links.section(self.kind))
        return data


def order(findings: list[Finding]) -> list[Finding]:
    """CUDA-only first (it says how the rest was found), then by level, then by line."""
    return sorted(findings, key=lambda f: (f.code != "cuda-only", LEVELS.index(f.level), f.line or 0, f.code))


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} bytes"
