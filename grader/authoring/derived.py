"""The files generated from others, which an author regenerates rather than edits: the chapter notebooks
(`notebooks/*.ipynb`) and the shipped copy of every exercise (`grader/shipped_exercises.json`), both written by
`python -m grader.authoring.notebooks`, and the book's launch notebooks (`book/<page>.ipynb`), written by
`python book/_ext/notebooks.py`. Here: which of them are stale, and rewriting only those."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from grader import ROOT
from grader.authoring import notebooks
from grader.learner import workspace

CHAPTER_NOTEBOOKS_COMMAND = "python -m grader.authoring.notebooks"
LAUNCH_NOTEBOOKS_COMMAND = "python book/_ext/notebooks.py"


def book_ext(name: str) -> ModuleType:
    """A module of the book's build (book/_ext/NAME.py), imported as the book's tests import it."""
    folder = str(ROOT / "book" / "_ext")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


# ---------------------------------------------------------------------------------------------- chapter notebooks
def stale_chapter_notebooks() -> list[Path]:
    """Chapter notebooks that are missing or differ from what grader.authoring.notebooks would write now."""
    return [path for chapter in notebooks.chapters() for path in [notebooks.notebook_path(chapter)]
            if not path.exists() or path.read_text(encoding="utf-8") != notebooks.text(notebooks.build(chapter))]


def stray_chapter_notebooks() -> list[Path]:
    """Notebooks in notebooks/ of no chapter with exercises (a chapter renamed, or its exercises moved)."""
    wanted = {notebooks.notebook_path(c) for c in notebooks.chapters()}
    return sorted(set(notebooks.FOLDER.glob("*.ipynb")) - wanted)


def shipped_copy_is_stale() -> bool:
    """grader/shipped_exercises.json (what `devcourse reset` restores) differs from exercises/."""
    path = workspace.SHIPPED_FILE
    return not path.exists() or path.read_text(encoding="utf-8") != notebooks.shipped_text()


# ---------------------------------------------------------------------------------------------- launch notebooks
def launch_notebook_is_stale(page: Path) -> bool:
    """The page's launch notebook (book/<page>.ipynb, which Colab, Binder and JupyterHub open) is missing or
    does not say what the page says."""
    import jupytext

    launch, store = book_ext("notebooks"), book_ext("output_store")
    path = launch.notebook_path(page)
    expected = launch.cells(store.read_markdown_notebook(page.read_text(encoding="utf-8")))
    return not path.exists() or launch.cells(jupytext.read(path)) != expected


def stale_launch_notebooks() -> list[Path]:
    """Pages of the book whose launch notebook is stale."""
    return [page for page in book_ext("output_store").toc_pages() if launch_notebook_is_stale(page)]


# ---------------------------------------------------------------------------------------------- regenerating
def regenerate() -> list[tuple[str, str]]:
    """Rewrite every stale derived file (and remove stray chapter notebooks); [(what was done, the command that
    does the same)], empty when everything was in step."""
    done = []
    stale = stale_chapter_notebooks()
    for chapter in notebooks.chapters():
        path = notebooks.notebook_path(chapter)
        if path in stale:
            notebooks.FOLDER.mkdir(exist_ok=True)
            path.write_text(notebooks.text(notebooks.build(chapter)), encoding="utf-8")
            done.append((f"wrote {path.relative_to(ROOT)}", CHAPTER_NOTEBOOKS_COMMAND))
    for path in stray_chapter_notebooks():
        path.unlink()
        done.append((f"removed {path.relative_to(ROOT)} (no chapter with exercises)", CHAPTER_NOTEBOOKS_COMMAND))
    if shipped_copy_is_stale():
        workspace.SHIPPED_FILE.write_text(notebooks.shipped_text(), encoding="utf-8")
        done.append((f"wrote {workspace.SHIPPED_FILE.relative_to(ROOT)}", CHAPTER_NOTEBOOKS_COMMAND))
    launch = book_ext("notebooks")
    for page in stale_launch_notebooks():
        done.append((f"wrote {launch.write(page).relative_to(ROOT)}", LAUNCH_NOTEBOOKS_COMMAND))
    return done
