"""Write `book/<page>.ipynb` next to each page, for the Colab, Binder and JupyterHub launch buttons.

The `.md` page is the source; the notebook is generated from it (without outputs: whoever launches it runs
it on their own hardware) and committed, because Colab opens notebooks only from a repository. The build
ignores these files; tests/book/ checks that each one matches its page.

    python book/_ext/notebooks.py          # regenerate every page's notebook
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import jupytext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from output_store import read_markdown_notebook, toc_pages  # noqa: E402


def notebook_path(page: Path) -> Path:
    return page.with_suffix(".ipynb")


def cells(nb) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nb.cells]


def write(page: Path) -> Path:
    nb = read_markdown_notebook(page.read_text())
    for i, cell in enumerate(nb.cells):
        # Ids from the content, not random ones: regenerating an unchanged page leaves its notebook unchanged.
        cell.id = hashlib.sha256(f"{i}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:8]
    out = notebook_path(page)
    jupytext.write(nb, out, fmt="ipynb")
    return out


def main() -> int:
    for page in toc_pages():
        print(f"wrote {write(page).relative_to(page.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
