"""Record the outputs of book pages by running them on this machine.

    python book/_ext/record.py book/memory.md [...]     # some pages
    python book/_ext/record.py --all                     # every page in _toc.yml

Each page runs top to bottom in a fresh Jupyter kernel (nbclient), in a scratch directory. Cells tagged
`raises-exception` may raise; any other error stops the page and nothing is written for it. The outputs
and a description of the machine go to book/_recorded/<page>.json (see output_store.py)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import nbclient

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # the repository root, for grader
from grader import machine  # noqa: E402
from output_store import ROOT, STORE, cell_keys, code_cells, read_markdown_notebook, toc_pages  # noqa: E402


def execute(nb, timeout: int) -> None:
    """Run a page's notebook in place, top to bottom, in a fresh kernel and a scratch directory. Cells tagged
    raises-exception may raise; any other error raises nbclient's CellExecutionError."""
    with tempfile.TemporaryDirectory(prefix="page-") as scratch:
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": scratch}}).execute()


def record(page: Path, timeout: int) -> Path:
    nb = read_markdown_notebook(page.read_text())
    execute(nb, timeout)
    cells = code_cells(nb)
    data = {
        "page": page.stem,
        "hardware": machine.describe(),
        "cells": [
            {"key": key, "execution_count": c.get("execution_count"), "outputs": c.outputs}
            for c, key in zip(cells, cell_keys([c.source for c in cells]))
        ],
    }
    STORE.mkdir(exist_ok=True)
    out = STORE / f"{page.stem}.json"
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pages", nargs="*", type=Path)
    p.add_argument("--all", action="store_true", help="every page in _toc.yml")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = p.parse_args(argv)
    pages = toc_pages() if args.all else args.pages
    failed = []
    for page in pages:
        if not code_cells(read_markdown_notebook(page.read_text())):
            continue
        try:
            print(f"recorded {page.name} -> {record(page, args.timeout).relative_to(ROOT)}", flush=True)
        except Exception as exc:  # report every page, then fail
            failed.append(page.name)
            print(f"FAILED {page.name}: {str(exc)[-2000:]}", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
