"""Sphinx directives that take the course's numbers from course.toml at build time, so that the book and the
course metadata cannot drift apart (and no page states them by hand: tests/book/test_prose_numbers.py).

`course-exercises`: a chapter's "Graded exercises" section. How many exercises the chapter has, how to do
them in a terminal (each one's file and command) and in a notebook (an "Open in Colab" link to the chapter's
exercise notebook, notebooks/<NN>-<chapter>.ipynb, written by `python -m grader.authoring.notebooks`; the link uses
_config.yml's repository, as the launch buttons do).

Each exercise's entry links the section that explains its bug (course.toml's `explained_in`), relative to the
page.

`course-overview`: for the introduction: how many graded exercises, chapters and points the course has, and
about how long they take (MINUTES_PER_POINT per point: an exercise's points say how much work it is)."""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from grader.authoring import notebooks
from grader.catalog import book_links, course

#: An estimate for the overview: a 1-point exercise takes about this long, a 3-point one three times as long.
MINUTES_PER_POINT = 12


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class CourseExercises(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        chapter = self.env.docname.removeprefix("book/")
        exercises = course.for_chapter(chapter)
        self.env.note_dependency(str(course.COURSE_FILE))
        if not exercises:
            return [nodes.paragraph(text="This chapter has no graded exercises yet.")]
        points = sum(e.points for e in exercises)
        intro = nodes.paragraph(
            text=f"This chapter has {_plural(len(exercises), 'graded exercise')} ({_plural(points, 'point')}). "
            "Each is a small program with a real device bug; the grader runs your fix on the CPU, on every GPU "
            "you have, and on a simulated accelerator with two devices, so a device bug fails even without a GPU."
        )
        terminal = nodes.paragraph()
        terminal += nodes.strong(text="In a terminal: ")
        terminal += nodes.Text("fix the file shown, then run the command shown (or ")
        terminal += nodes.literal(text="devcourse watch")
        terminal += nodes.Text(", which checks each time you save; ")
        terminal += nodes.literal(text="devcourse list")
        terminal += nodes.Text(" shows your progress).")
        notebook = nodes.paragraph()
        notebook += nodes.strong(text="In a notebook: ")
        url = notebooks.colab_url(chapter)
        notebook += nodes.reference("", "Open in Colab", refuri=url, classes=["colab-link"])
        notebook += nodes.Text(" opens this chapter's exercises (or open ")
        notebook += nodes.literal(text=f"notebooks/{notebooks.notebook_name(chapter)}")
        notebook += nodes.Text(" in Jupyter): fix each code cell, run it, then run its check cell.")
        items = nodes.enumerated_list()
        for ex in exercises:
            para = nodes.paragraph()
            para += nodes.strong(text=ex.title)
            para += nodes.Text(f" ({_plural(ex.points, 'point')}): {ex.teaches} ")
            para += nodes.Text("File: ")
            para += nodes.literal(text=f"exercises/{ex.path}")
            para += nodes.Text(". Check it: ")
            para += nodes.literal(text=f"devcourse check {ex.name}")
            para += nodes.Text(".")
            if ex.explained_in:  # the same section that the exercise's hints end with (grader.catalog.book_links)
                para += nodes.Text(" Explained in: ")
                para += nodes.reference("", book_links.section_title(ex),
                                        refuri=book_links.relative_link(ex, chapter))
                para += nodes.Text(".")
            items += nodes.list_item("", para, ids=[f"exercise-{ex.name}"])
        return [intro, terminal, notebook, items]


def overview_text() -> str:
    exercises = course.load()
    chapters = {e.chapter for e in exercises}
    points = sum(e.points for e in exercises)
    hours = max(1, round(points * MINUTES_PER_POINT / 60))
    return (f"The course has {_plural(len(exercises), 'graded exercise')} in {_plural(len(chapters), 'chapter')}, "
            f"worth {_plural(points, 'point')} in all (an exercise's points say how much work it is). Allow about "
            f"{_plural(hours, 'hour')} for them, on top of reading the chapters.")


class CourseOverview(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(course.COURSE_FILE))
        return [nodes.paragraph(text=overview_text())]


def setup(app):
    app.add_directive("course-exercises", CourseExercises)
    app.add_directive("course-overview", CourseOverview)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
