"""Record the outputs of book pages by running them on this machine.

    python book/_ext/record.py book/memory.md [...]     # some pages
    python book/_ext/record.py --all                     # every page in _toc.yml

Each page runs top to bottom in a fresh Jupyter kernel (nbclient), in a scratch directory. Cells tagged
`raises-exception` must raise; any other error stops the page and nothing is written for it. A page is
not recorded on a machine with fewer GPUs than it needs (recording_rules.py). The outputs, a description
of the machine and a digest of both go to book/_recorded/<page>.json (see output_store.py)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import nbclient

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # the repository root, for grader
from grader.engine import machine  # noqa: E402
from output_store import ROOT, STORE, cell_keys, code_cells, read_markdown_notebook, toc_pages  # noqa: E402
from record_digest import digest  # noqa: E402
from recording_rules import gpu_shortfall, silent_raisers  # noqa: E402


class RefusedRecord(Exception):
    """The page ran, or would run, in a way whose outputs the book must not show."""


def execute(nb, timeout: int) -> None:
    """Run a page's notebook in place, top to bottom, in a fresh kernel and a scratch directory. Cells tagged
    raises-exception may raise; any other error raises nbclient's CellExecutionError."""
    with tempfile.TemporaryDirectory(prefix="page-") as scratch:
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": scratch}}).execute()


def record(page: Path, timeout: int, allow_fewer_gpus: bool = False) -> Path:
    hardware = machine.describe()
    if (short := gpu_shortfall(page.stem, hardware)) and not allow_fewer_gpus:
        raise RefusedRecord(short)
    nb = read_markdown_notebook(page.read_text())
    execute(nb, timeout)
    cells = code_cells(nb)
    if silent := silent_raisers(cells):
        raise RefusedRecord(f"code cells {silent} are tagged raises-exception but raised nothing")
    data = {
        "page": page.stem,
        "hardware": hardware,
        "cells": [
            {"key": key, "execution_count": c.get("execution_count"), "outputs": c.outputs}
            for c, key in zip(cells, cell_keys([c.source for c in cells]))
        ],
    }
    data = json.loads(json.dumps(data))  # plain JSON types, so the digest is of exactly what is written
    data["digest"] = digest(data)
    STORE.mkdir(exist_ok=True)
    out = STORE / f"{page.stem}.json"
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pages", nargs="*", type=Path)
    p.add_argument("--all", action="store_true", help="every page in _toc.yml")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    p.add_argument("--allow-fewer-gpus", action="store_true",
                   help="record even without the GPUs a page needs (to try things out; tests/book refuses the result)")
    args = p.parse_args(argv)
    pages = toc_pages() if args.all else args.pages
    failed = []
    for page in pages:
        if not code_cells(read_markdown_notebook(page.read_text())):
            continue
        try:
            print(f"recorded {page.name} -> {record(page, args.timeout, args.allow_fewer_gpus).relative_to(ROOT)}", flush=True)
        except Exception as exc:  # report every page, then fail
            failed.append(page.name)
            print(f"FAILED {page.name}: {str(exc)[-2000:]}", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
