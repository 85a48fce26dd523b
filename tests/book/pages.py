"""The book's pages, and the recorder's helpers, for the book tests."""

import json
import sys

from grader import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import notebooks  # noqa: E402, F401  (the tests use it through this module)
import record  # noqa: E402
import record_digest  # noqa: E402, F401
import recording_rules  # noqa: E402, F401

PAGES = record.toc_pages()
# Pages that are text only. Every other page must have code cells: if the parser ever finds none, the tests
# of those pages fail instead of skipping, and the book cannot quietly lose all its outputs.
PAGES_WITHOUT_CODE = {"intro", "hardware-status", "instructors", "at-scale", "distributed-workers"}
CODE_PAGES = [p for p in PAGES if p.stem not in PAGES_WITHOUT_CODE]


def stored_record(page) -> dict:
    path = record.STORE / f"{page.stem}.json"
    assert path.exists(), f"{page.name} has no recorded outputs: {how_to_record(page)}"
    return json.loads(path.read_text())


def how_to_record(page) -> str:
    gpus = recording_rules.gpus_needed(page.stem)
    return (f"record it on a machine with {gpus} GPU(s): python book/_ext/record.py "
            f"{page.relative_to(record.ROOT)} (tools/on_gpu.sh records every page)")


def current_records(page) -> list[tuple]:
    """(cell, recorded cell or None) for each code cell of the page as it is now: a cell whose code (or the
    code of a cell before it) changed since the recording gets None."""
    cells = record.code_cells(record.read_markdown_notebook(page.read_text()))
    by_key = {c["key"]: c for c in stored_record(page)["cells"]}
    return [(c, by_key.get(k)) for c, k in zip(cells, record.cell_keys([c.source for c in cells]))]
