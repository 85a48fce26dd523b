"""Sphinx directive `course-exercises`: lists the graded exercises of the current page from course.toml.

The list is generated, so a chapter and the course metadata cannot drift apart."""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from grader import course


class CourseExercises(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        chapter = self.env.docname.removeprefix("book/")
        exercises = course.for_chapter(chapter)
        self.env.note_dependency(str(course.COURSE_FILE))
        if not exercises:
            return [nodes.paragraph(text="This chapter has no graded exercises yet.")]
        intro = nodes.paragraph(
            text="Each exercise is a file with a real bug. Fix it in exercises/, then check it with the "
            "command shown; the grader runs your code on the CPU, on every GPU you have, and on a "
            "simulated accelerator."
        )
        items = nodes.enumerated_list()
        for ex in exercises:
            para = nodes.paragraph()
            para += nodes.strong(text=ex.title)
            para += nodes.Text(f" ({ex.points} point{'s' if ex.points != 1 else ''}): {ex.teaches} ")
            para += nodes.Text("File: ")
            para += nodes.literal(text=f"exercises/{ex.path}")
            para += nodes.Text(". Check it: ")
            para += nodes.literal(text=f"devcourse check {ex.name}")
            para += nodes.Text(".")
            items += nodes.list_item("", para, ids=[f"exercise-{ex.name}"])
        return [intro, items]


def setup(app):
    app.add_directive("course-exercises", CourseExercises)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
