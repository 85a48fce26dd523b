"""What `devcourse` says at a learner's milestones, as rustlings does: a welcome on the first run, a word at the
end of each part of the book, and one at the end of the course. The texts are course.toml's ([messages],
[[parts]]); each is said once, and the progress file records it (`welcomed`, `milestones`), under its lock, so
that two commands finishing at once do not both say it nor both miss it."""

from __future__ import annotations

from grader.catalog import book_links, course
from grader.learner.progress import DONE, Progress


def welcome(prog: Progress) -> str | None:
    """The welcome text, the first time only (then recorded); None after that."""
    if not prog.welcome_once():
        return None
    return f"{course.message('welcome')}\nThe book: {book_links.home()}"


def after_pass(prog: Progress, ex: course.Exercise) -> list[str]:
    """The texts due now that `ex` passed: its part's end when every exercise of the part is done, the course's
    end when every exercise is. Each is returned once (then recorded)."""
    part = course.part_of(ex)

    def due(p: Progress) -> list[tuple[str, str]]:
        texts = []
        if part and part.done and all(p.status(e.name) == DONE for e in course.load()
                                      if e.chapter in part.chapters):
            texts.append((f"part:{part.caption}", f'End of part "{part.caption}".\n{part.done}'))
        if all(p.status(e.name) == DONE for e in course.load()) and course.message("finished"):
            texts.append(("finished", f"The end of the course.\n{course.message('finished')}"))
        return texts

    return prog.say_once(due)
