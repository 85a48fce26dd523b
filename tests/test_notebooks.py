"""The course in a notebook: the generated chapter notebooks are in step with course.toml and the exercise
files, and a notebook works in a fresh kernel as a learner uses it (the set-up cell, a broken exercise that
fails its check with the terminal's table and messages, a fix that passes). Also the book's links to them."""

from __future__ import annotations

import json

import nbformat
from nbclient import NotebookClient

from grader import ROOT
from grader.authoring import notebooks
from grader.catalog import course
from grader.authoring import derived
from tests.learner import learner_env, make_course_copy


def test_notebooks_are_in_step():
    # the checks devcourse dev check makes before it regenerates them
    stale = [p.name for p in derived.stale_chapter_notebooks()]
    assert not stale, f"{stale} missing or stale: run python -m grader.authoring.notebooks (or devcourse dev check)"


def test_no_stray_notebooks_and_every_exercise_once():
    assert not derived.stray_chapter_notebooks()
    expected = {notebooks.notebook_path(c) for c in notebooks.chapters()}
    names = [line.split()[1] for p in expected for c in nbformat.read(p, 4).cells
             if c.cell_type == "code" for line in c.source.splitlines()[:1] if line.startswith("%%exercise ")]
    assert sorted(names) == sorted(e.name for e in course.load())


def test_shipped_copy_matches_the_exercises():
    # what `devcourse reset` restores
    assert not derived.shipped_copy_is_stale(), "grader/shipped_exercises.json is stale: run python -m grader.authoring.notebooks"


def test_exercise_cell_holds_the_shipped_code():
    ex = course.get("masked_mean")
    nb = nbformat.read(notebooks.notebook_path(ex.chapter), 4)
    cell = next(c for c in nb.cells if c.source.startswith(f"%%exercise {ex.name}\n"))
    _, code = notebooks.split_docstring(ex.exercise_file.read_text())
    assert cell.source.split("\n", 1)[1].strip() == code.strip()
    assert "Check your fix with" not in "".join(c.source for c in nb.cells)  # the terminal's wording


def outputs_text(cell) -> str:
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
        else:
            parts += [out.data.get("text/html", ""), out.data.get("text/plain", "")]
    return "\n".join(parts)


def test_a_notebook_in_a_fresh_kernel(tmp_path):
    folder = make_course_copy(tmp_path)
    ex = course.get("masked_mean")
    nb = nbformat.read(notebooks.notebook_path(ex.chapter), 4)
    setup = nb.cells[1]
    exercise = next(c for c in nb.cells if c.source.startswith(f"%%exercise {ex.name}\n"))
    check = nb.cells[nb.cells.index(exercise) + 1]
    other_check = next(c for c in nb.cells if c.source.startswith("%devcourse check ") and c is not check)
    nb.cells = [setup, other_check, exercise, check]
    client = NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(folder)}})
    with client.setup_kernel(env=learner_env()):
        client.execute_cell(setup, 0)
        text = outputs_text(setup)
        assert "git clone" not in text and "Error" not in text, text  # the grader is here: nothing installed
        assert f"0 of {len(course.load())} exercises done" in text

        client.execute_cell(other_check, 1)
        assert "Run the exercise cell of" in outputs_text(other_check)

        client.execute_cell(exercise, 2)  # the broken code runs (the bug shows on a device only)
        assert not any(o.output_type == "error" for o in exercise.outputs)
        client.execute_cell(check, 3)
        html = check.outputs[0].data["text/html"]
        assert "does not pass yet" in html and "<pre" in html and "color" in html
        assert "the mask is created on cpu" in html
        line = next(i for i, ln in enumerate(exercise.source.splitlines(), 1) if "mask = positions" in ln)
        assert f"line {line}, in masked_mean" in html  # the cell's own line numbers (line 1: %%exercise)

        shipped = check.source  # its second line, uncommented: both commands show (issue 41)
        check.source = shipped.replace("# stuck? %devcourse hint", "%devcourse hint")
        assert check.source.splitlines()[1] == f"%devcourse hint {ex.name}"
        client.execute_cell(check, 3)
        assert "does not pass yet" in check.outputs[0].data["text/html"]
        assert len(check.outputs) == 2 and "Hint 1 of" in outputs_text(check), outputs_text(check)
        check.source = shipped

        exercise.source = f"%%exercise {ex.name}\n" + ex.solution_file.read_text()
        client.execute_cell(exercise, 2)
        client.execute_cell(check, 3)
        result = check.outputs[0].data
        assert "masked_mean passes on cpu, sim:0, sim:1" in result["text/plain"]
        assert "\x1b" not in result["text/plain"]
    assert (folder / ".devcourse" / "notebook" / "masked_mean.py").is_file()
    state = json.loads((folder / ".devcourse" / "progress.json").read_text())
    assert state["exercises"]["masked_mean"]["status"] == "done"
    assert not (ROOT / "exercises" / ".devcourse").exists()


def test_the_book_links_each_chapter_to_its_notebook(tmp_path):
    """The {course-exercises} and {course-overview} directives, built by Sphinx in a small project."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    src = tmp_path / "src"
    (src / "book").mkdir(parents=True)
    (src / "conf.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
                                 "extensions = ['course_exercises']\n")
    (src / "index.rst").write_text("Intro\n=====\n\n.. course-overview::\n\n.. toctree::\n\n   book/device-mismatch\n")
    (src / "book" / "device-mismatch.rst").write_text("Mismatch\n========\n\n.. course-exercises::\n")
    # docutils keeps directives in a process-wide registry: without the namespace, the course's directives stay
    # registered after this build and a later plain-docutils parse of a page (test_book_links) runs them.
    with docutils_namespace():
        app = Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html", status=None,
                     warningiserror=True, freshenv=True)
        app.build()
    page = (tmp_path / "out" / "book" / "device-mismatch.html").read_text()
    chapter = course.for_chapter("device-mismatch")
    url = notebooks.colab_url("device-mismatch")
    assert url == ("https://colab.research.google.com/github/device-course/device-course/blob/main/"
                   "notebooks/03-device-mismatch.ipynb")
    assert f'href="{url}"' in page and "Open in Colab" in page
    assert f"This chapter has {len(chapter)} graded exercises" in page
    assert all(f'id="exercise-{e.name}"' in page and f">exercises/{e.path}<" in page for e in chapter)
    intro = (tmp_path / "out" / "index.html").read_text()
    exercises = course.load()
    assert f"The course has {len(exercises)} graded exercises in {len(notebooks.chapters())} chapters" in intro
    assert f"worth {sum(e.points for e in exercises)} points" in intro and "Allow about" in intro
