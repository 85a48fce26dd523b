"""Write the exercise notebooks, one per chapter, from the same sources as the terminal course:
`notebooks/<NN>-<chapter>.ipynb` (NN: the number of the chapter's exercises/ folder), plus the package's
shipped copy of every exercise file (grader/shipped_exercises.json, which `devcourse reset` restores).

    python -m grader.authoring.notebooks          # after changing course.toml, an exercise, or a chapter's title

Each notebook: a set-up cell (installs the course's grader when `import grader` fails, as on Colab: a clone
of the repository put on sys.path, plus the few packages grading needs; then `%load_ext grader.magics`), then
per exercise a text cell (title, points, the exercise's docstring), its broken code in an editable cell that
starts with `%%exercise NAME`, and a check cell `%devcourse check NAME`; at the end, a note and a cell that
run `%devcourse doctor` on the learner's own cells (grader.doctor.notebook). Without outputs; cell ids come from
the content, so regenerating leaves unchanged notebooks unchanged. tests/test_notebooks.py keeps them in step.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat

from grader import ROOT
from grader.learner import workspace
from grader.catalog import book_links, course

FOLDER = ROOT / "notebooks"
#: Where the set-up cell clones the course when the grader is missing (Colab's working folder).
CLONE_TO = "/content/device-course"
#: What grading needs beyond a Colab or Jupyter kernel's own packages (torch, IPython).
GRADING_PACKAGES = ("pytest>=8", "pytest-timeout>=2.3", "rich>=13", "nbformat>=5.9")


def config() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def repository() -> tuple[str, str]:
    """(https URL, branch) of the course's repository, from _config.yml (as the book's launch buttons)."""
    repo = config().get("repository", {})
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def chapters() -> list[str]:
    """Chapters that have exercises, in course order."""
    return list(dict.fromkeys(ex.chapter for ex in course.load()))


def notebook_name(chapter: str) -> str:
    number = Path(course.for_chapter(chapter)[0].path).parts[0].split("_")[0]
    return f"{number}-{chapter}.ipynb"


def notebook_path(chapter: str) -> Path:
    return FOLDER / notebook_name(chapter)


def colab_url(chapter: str) -> str:
    url, branch = repository()
    return f"https://colab.research.google.com/github/{url.removeprefix('https://github.com/')}/blob/{branch}/" \
           f"notebooks/{notebook_name(chapter)}"


def chapter_title(chapter: str) -> str:
    page = ROOT / "book" / f"{chapter}.md"
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return chapter.replace("-", " ").capitalize()


def split_docstring(source: str) -> tuple[str, str]:
    """(the module docstring, the code after it)."""
    tree = ast.parse(source)
    if not (tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
            and isinstance(tree.body[0].value.value, str)):
        return "", source
    doc = tree.body[0].value.value
    rest = source.splitlines(keepends=True)[tree.body[0].end_lineno:]
    return doc, "".join(rest).lstrip("\n")


def setup_source() -> str:
    url, branch = repository()
    packages = " ".join(f'"{p}"' for p in GRADING_PACKAGES)
    return f"""\
# Set-up: run this cell first. Where the course's grader is missing (on Colab, say), it fetches the course
# and the few packages grading needs; then it loads the notebook commands %%exercise and %devcourse.
try:
    import grader.magics
except ImportError:
    !git clone --quiet --depth 1 --branch {branch} {url}.git {CLONE_TO}
    %pip install --quiet {packages}
    import sys
    sys.path.insert(0, "{CLONE_TO}")
%load_ext grader.magics
%devcourse list"""


def intro_source(chapter: str) -> str:
    exercises = course.for_chapter(chapter)
    points = sum(e.points for e in exercises)
    return f"""\
# {chapter_title(chapter)}: graded exercises

{len(exercises)} exercise{'s' if len(exercises) != 1 else ''} ({points} point{'s' if points != 1 else ''}), \
each a small program with a real device bug. For each one:

1. read what the code should do;
2. fix the code cell (it starts with `%%exercise NAME`) and run it: it saves your code and runs it here;
3. run the check cell below it (`%devcourse check NAME`): the grader runs your code on the CPU, on the GPU if
   this machine has one (on Colab: *Runtime → Change runtime type → GPU*), and on a simulated accelerator
   with two devices, `sim:0` and `sim:1`, so a device bug fails here even without a GPU.

Stuck? `%devcourse hint NAME` shows the next hint. Run the set-up cell below first."""


def exercise_cells(ex: course.Exercise) -> list:
    doc, code = split_docstring(workspace.shipped_table()[ex.path])
    doc = re.sub(r"\n\s*Check your fix with:.*$", "", doc.strip(), flags=re.S)
    first, _, rest = doc.partition("\n")
    if first.strip().rstrip(".").lower() != ex.title.lower():  # the docstring's first line: often the title
        rest = f"{first.strip()}\n{rest}"
    text = (f"## {ex.number}. {ex.title}\n\n*Exercise `{ex.name}`, {ex.points} point{'s' if ex.points != 1 else ''}."
            f"*\n\n{rest.strip()}\n\nFix the next cell and run it, then run the check below it.")
    if ex.explained_in:  # the section its hints end with (grader.catalog.book_links), as the book's page in this clone
        page, _ = book_links.split(ex)
        text += (f"\n\nExplained in the book: \"{book_links.section_title(ex)}\" in "
                 f"[{book_links.page_title(page)}](../book/{page}.ipynb).")
    return [
        nbformat.v4.new_markdown_cell(text),
        nbformat.v4.new_code_cell(f"%%exercise {ex.name}\n{code.rstrip()}\n"),
        nbformat.v4.new_code_cell(f"%devcourse check {ex.name}\n# stuck? %devcourse hint {ex.name}"),
    ]


DOCTOR_TEXT = """\
## On your own code

The same instruments look at a training script of your own, with or without a GPU. Put its cells in this
notebook (or open your own notebook, with the set-up cell above first), run them, then run the cell below:
`%devcourse doctor` runs the cells run so far again, in a process of its own, for a few steps on the simulated
accelerator (`sim:1`, so that a lost device index shows), and reports each device problem at its cell and line
with the book's section that explains it. In a terminal: `devcourse doctor train.py`."""

DOCTOR_CELL = """\
# Options: %devcourse doctor 3 5-7 (those cells only), --steps N (default 3), --device cuda:0 (a real GPU)
%devcourse doctor"""


def doctor_cells() -> list:
    """The note and the cell that run `devcourse doctor` on the notebook's own cells (grader.doctor.notebook)."""
    return [nbformat.v4.new_markdown_cell(DOCTOR_TEXT), nbformat.v4.new_code_cell(DOCTOR_CELL)]


def build(chapter: str):
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "accelerator": "GPU",  # Colab opens it on a GPU runtime when one is available
        "colab": {"provenance": []},
    }
    nb.cells = [nbformat.v4.new_markdown_cell(intro_source(chapter)), nbformat.v4.new_code_cell(setup_source())]
    for ex in course.for_chapter(chapter):
        nb.cells += exercise_cells(ex)
    nb.cells += doctor_cells()
    for i, cell in enumerate(nb.cells):
        # Ids from the content, not random ones: regenerating an unchanged notebook leaves it unchanged.
        cell.id = hashlib.sha256(f"{i}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:8]
    return nb


def text(nb) -> str:
    return nbformat.writes(nb) + "\n"


def shipped_text() -> str:
    return json.dumps(workspace.shipped_table(), indent=1, sort_keys=True) + "\n"


def main() -> int:
    FOLDER.mkdir(exist_ok=True)
    wanted = set()
    for chapter in chapters():
        path = notebook_path(chapter)
        wanted.add(path)
        path.write_text(text(build(chapter)), encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    for stale in set(FOLDER.glob("*.ipynb")) - wanted:
        stale.unlink()
        print(f"removed {stale.relative_to(ROOT)}")
    workspace.SHIPPED_FILE.write_text(shipped_text(), encoding="utf-8")
    print(f"wrote {workspace.SHIPPED_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
