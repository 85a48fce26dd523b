"""The store of outputs recorded on real hardware, and how pages are read and merged with it.

Pages are MyST Markdown notebooks without outputs. `book/_ext/record.py` executes a page on a machine
(a GPU one for the published book) and stores each code cell's outputs in `book/_recorded/<page>.json`,
keyed by a hash of that cell's source *and every code cell before it*: an output depends on the state the
earlier cells built, so editing any earlier code cell marks the later outputs stale. The build never runs
code; tests/book/ checks that no record is stale or missing and runs every page on the CPU.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import nbformat
import yaml

BOOK = Path(__file__).resolve().parent.parent
STORE = BOOK / "_recorded"
ROOT = BOOK.parent


def toc_pages() -> list[Path]:
    """The book's pages, in reading order (only these are built)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    return [ROOT / f"{f}.md" for f in files]


def cell_keys(sources: list[str]) -> list[str]:
    """The record key of each code cell, given the code cells' sources in page order."""
    h = hashlib.sha256()
    keys = []
    for src in sources:
        h.update(src.strip().encode() + b"\0")
        keys.append(h.copy().hexdigest()[:16])
    return keys


def code_cells(nb: nbformat.NotebookNode) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def read_markdown_notebook(text: str) -> nbformat.NotebookNode:
    """A page as a notebook. The recorder and the build both read pages here, so their keys agree."""
    import jupytext

    return jupytext.reads(text, fmt="md:myst")


@cache
def load_records() -> dict[str, dict]:
    """All recorded cells of all pages: key -> {"outputs", "execution_count", "page"}."""
    records = {}
    for f in sorted(STORE.glob("*.json")):
        page = json.loads(f.read_text())
        for cell in page["cells"]:
            records[cell["key"]] = {**cell, "page": page["page"]}
    return records


def load_pages() -> list[dict]:
    """The recorded pages, in reading order."""
    return [json.loads(f.read_text()) for p in toc_pages() if (f := STORE / f"{p.stem}.json").exists()]


def merge(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    cells = code_cells(nb)
    records = load_records()
    for cell, key in zip(cells, cell_keys([c.source for c in cells])):
        rec = records.get(key)
        if rec is not None:
            cell.outputs = [nbformat.from_dict(o) for o in joined_streams(rec["outputs"])]
            cell.execution_count = rec.get("execution_count")
    return nb


def joined_streams(outputs: list[dict]) -> list[dict]:
    """Consecutive outputs of one stream as one output, their texts joined as written. A print can arrive in
    two outputs ("b: ", then the tensor); myst-nb's nb_merge_streams ends each part with a newline when it
    merges them, which split the printed line in two."""
    joined: list[dict] = []
    for out in outputs:
        last = joined[-1] if joined else None
        if (out.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream"
                and last.get("name") == out.get("name")):
            joined[-1] = {**last, "text": last["text"] + out["text"]}
        else:
            joined.append(out)
    return joined
