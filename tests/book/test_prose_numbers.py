"""Numbers in the prose that report a measurement must come from the recorded outputs (issue 12).

A hand-written "296 µs" or "three to six times faster" drifts away from the plot beside it as soon as the
page is recorded again. Such numbers are written as myst-nb glue roles instead, {glue:text}`key:.1f`,
filled at build time from values that a (hidden) code cell of the same page glued when it was recorded.
This test finds numbers with a unit of time, memory, bandwidth or ratio in the text (code excluded) and
fails on every one that is not in ALLOWED, the few that are not measurements.
"""

import re

import pytest

from tests.book.pages import PAGES, record

# (page, the exact text the pattern matched) -> why it is not a measurement.
ALLOWED = {
    ("streams-and-events", "50 ms"): "how long the cell's spin() keeps the side stream busy: a length it asks for",
    ("models-and-buffers", "16 MiB"): "size of the 4096 x 4096 boolean mask the text describes",
    ("models-and-buffers", "10%"): "PyTorch's default BatchNorm momentum, 0.1",
    ("memory", "1 MiB"): "allocator constant (small-request limit)",
    ("memory", "2 MiB"): "allocator constant (small-segment size)",
    ("memory", "10 MiB"): "allocator constant (the limit below which a request gets a 20 MiB segment)",
    ("memory", "20 MiB"): "allocator constant (large-segment size)",
    ("memory", "4 MiB"): "a size the measuring cell sets",
    ("memory", "4 ×"): "the rule of thumb 4 × parameters",
    ("memory", "2.1 GiB"): "exercise data",
    ("memory", "9.8 GiB"): "exercise data",
    ("memory", "10.4 GiB"): "exercise data",
    ("memory", "7.7 GiB"): "exercise solution arithmetic",
    ("memory", "0.6 GiB"): "exercise solution arithmetic",
    ("memory", "1.3 GiB"): "exercise solution arithmetic",
    ("memory", "5.2 GiB"): "exercise solution arithmetic",
    ("memory", "16 GiB"): "exercise data",
    ("memory", "10 GiB"): "exercise solution arithmetic",
    ("memory", "8 MiB"): "cuBLAS's default workspace off Hopper, 8 MiB + 128 KiB (CublasHandlePool.cpp; claims.toml)",
    ("data-loading", "4 KiB"): "a size the measuring cell sets",
    ("performance", "384 MiB"): "the size of the pinned allocation the measuring cell makes",
    ("performance", "4 KiB"): "the size data-loading's measuring cell sets, named to point at its timing",
    ("data-loading", "4 MiB"): "a size the measuring cell sets",
    ("data-loading", "256 MiB"): "a size the measuring cell sets",
    ("data-loading", "64 MiB"): "a size the measuring cell sets",
    ("data-loading", "96 MiB"): "a size the measuring cell sets",
    ("moving-tensors", "64 MiB"): "the size of the tensor the measuring cell converts",
    ("asynchrony", "256 MiB"): "the size of the tensor the measuring cell sets",
    ("asynchrony", "0.2 ms"): "exercise data (a colleague's claim to be judged)",
    ("asynchrony", "300 times"): "exercise data (a colleague's claim to be judged)",
    ("performance", "400 MB"): "exercise arithmetic: 10⁸ float32 elements",
    ("performance", "512 MiB"): "the power of two the caching host allocator rounds the cell's 384 MiB up to "
                                "(CachingHostAllocator.h; claims.toml, perf-answer-pinned-alloc)",
}

# "ten times" counts; "ten times faster" compares.
COMPARED = r"(?:faster|slower|as|more|less|higher|lower|larger|smaller|longer|shorter|the)\b"
NUMBER = r"(?<![\w.])\d+(?:[.,]\d+)*(?:\s*(?:to|-|–)\s*\d+(?:[.,]\d+)*)?"
# The unit ends the match; for "times" the comparative after it is only looked at.
UNIT = (r"(?:[KMGT]i?B/s|[KMGT]iB|[kKMGT]B|µs|us|ms|ns|s|seconds?|minutes?|%|percent"
        r"|×(?!\s*\d)|x(?![\w\d]|\s*\d)|-?fold|times(?=\s+" + COMPARED + r"))(?!\w)")
WORD = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|a hundred|hundreds?|thousands?|several)"
PATTERNS = [
    re.compile(NUMBER + r"\s*" + UNIT),
    re.compile(WORD + r"(?:\s+(?:to|or)\s+" + WORD + r")?\s+(?:times\s+" + COMPARED + r"|orders? of magnitude|-?fold)(?!\w)", re.I),
    re.compile(r"\b(?:roughly|about|nearly|almost|close to|often|approximately)\s+(?:double|twice|half|triple)", re.I),
]
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(\S*)")


def prose_lines(markdown: str):
    """The lines of a markdown cell that are text: code blocks left out, the bodies of directives
    (exercises, solutions, admonitions) kept, inline code and roles blanked."""
    stack = []  # open fences: (marker, is_code)
    for line in markdown.splitlines():
        m = FENCE.match(line)
        if m and stack and m.group(1) == stack[-1][0] and not m.group(2):
            stack.pop()
            continue
        if m and not (stack and stack[-1][1]):
            stack.append((m.group(1), not m.group(2).startswith("{")))
            continue
        if (stack and stack[-1][1]) or re.match(r"^\s*:\w[\w-]*:", line):  # code, or a directive option
            continue
        yield re.sub(r"(\{[\w:-]+\})?`[^`]*`", " ", line)


def hand_written_numbers(page) -> list[str]:
    nb = record.read_markdown_notebook(page.read_text())
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in prose_lines(cell.source):
            found += [m.group(0) for p in PATTERNS for m in p.finditer(line)]
    return found


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_no_hand_written_measurements(page):
    bad = [n for n in hand_written_numbers(page) if (page.stem, n) not in ALLOWED]
    assert not bad, (
        f"{page.name} states {bad} by hand. If a recorded result says so, glue the value in a code cell "
        "(see performance.md's hidden cells) and write {glue:text}`name:.1f`; if it is not a measurement, "
        "add it to ALLOWED in this file with the reason."
    )


def test_allowlist_has_no_stale_entries():
    # An entry whose text is gone from its page would quietly allow that number again later.
    found = {(p.stem, n) for p in PAGES for n in hand_written_numbers(p)}
    assert not set(ALLOWED) - found, sorted(set(ALLOWED) - found)
