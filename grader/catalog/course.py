"""The course's single source of truth: `course.toml`, one entry per exercise (like rustlings' info.toml)."""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from grader import ROOT

COURSE_FILE = ROOT / "course.toml"

#: Leg families an exercise can name. "accelerator" means every accelerator leg: each real CUDA GPU,
#: MPS, and the simulated accelerator.
LEG_FAMILIES = ("cpu", "accelerator")


@dataclass(frozen=True)
class Exercise:
    name: str
    path: str  # relative to exercises/ and solutions/
    chapter: str  # book page (file name in book/, without .md)
    title: str
    teaches: str  # the bug, in one sentence
    hints: tuple[str, ...]
    failure: str  # a phrase the grader's message must contain when the shipped exercise fails
    points: int = 1
    legs: tuple[str, ...] = ("cpu", "accelerator")
    broken_on: tuple[str, ...] = ("accelerator",)  # legs on which the shipped exercise must fail
    timeout: int = 20  # seconds per check
    explained_in: str = ""  # "<book page>#<section anchor>": the section that explains the bug (grader.catalog.book_links)
    reported_in: str = ""  # the address of a public thread where users report this kind of bug
    # Why the shipped file passes on CUDA, for a bug of code that only knows CUDA (it shows on every other device,
    # the simulated one included); empty: the shipped file fails on every leg of broken_on, CUDA's included.
    shipped_passes_on_cuda: str = ""
    number: int = field(default=0, compare=False)

    @property
    def capstone(self) -> bool:
        """The last exercise of a part of the book, several of its bugs in one program: its title says so."""
        return self.title.startswith("Capstone:")

    @property
    def exercise_file(self) -> Path:
        return ROOT / "exercises" / self.path

    @property
    def solution_file(self) -> Path:
        return ROOT / "solutions" / self.path

    @property
    def grader_file(self) -> Path:
        p = Path(self.path)
        return ROOT / "grader" / "checks" / p.parent / f"test_{p.name}"

    @property
    def chapter_file(self) -> Path:
        return ROOT / "book" / f"{self.chapter}.md"


class CourseError(ValueError):
    """course.toml is malformed."""


def _exercise(number: int, raw: dict) -> Exercise:
    required = {"name", "path", "chapter", "title", "teaches", "hints", "failure"}
    missing = required - raw.keys()
    if missing:
        raise CourseError(f"exercise #{number} ({raw.get('name', '?')}) lacks {sorted(missing)}")
    unknown = raw.keys() - Exercise.__dataclass_fields__.keys()
    if unknown:
        raise CourseError(f"exercise {raw['name']}: unknown keys {sorted(unknown)}")
    ex = Exercise(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()},
        number=number,
    )
    for leg in ex.legs + ex.broken_on:
        if leg not in LEG_FAMILIES:
            raise CourseError(f"exercise {ex.name}: unknown leg {leg!r} (use {LEG_FAMILIES})")
    if not set(ex.broken_on) <= set(ex.legs):
        raise CourseError(f"exercise {ex.name}: broken_on {ex.broken_on} must be among legs {ex.legs}")
    if not ex.hints:
        raise CourseError(f"exercise {ex.name}: give at least one hint")
    if ex.reported_in and not re.fullmatch(r"https://\S+", ex.reported_in):
        raise CourseError(f"exercise {ex.name}: reported_in {ex.reported_in!r} is not an https:// address")
    if ex.explained_in and not re.fullmatch(r"[a-z0-9-]+#[a-z0-9_-]+", ex.explained_in):
        raise CourseError(f"exercise {ex.name}: explained_in {ex.explained_in!r} is not \"<page>#<anchor>\"")
    return ex


@cache
def _read(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise CourseError(f"{path} is missing: the course's list of exercises. Restore it (in a git clone: git "
                          "checkout course.toml) or reinstall the course.") from None
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{path} cannot be read: {exc}") from None
    return data


@cache
def load(path: Path = COURSE_FILE) -> tuple[Exercise, ...]:
    data = _read(path)
    exercises = tuple(_exercise(i, raw) for i, raw in enumerate(data.get("exercises", []), start=1))
    names = [e.name for e in exercises]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise CourseError(f"duplicate exercise names: {sorted(dupes)}")
    return exercises


def get(name: str) -> Exercise:
    for ex in load():
        if ex.name == name:
            return ex
    close = difflib.get_close_matches(name, [e.name for e in load()], n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else "devcourse list shows every exercise's name."
    raise KeyError(f"no exercise named {name!r}: {hint}")


def for_chapter(chapter: str) -> list[Exercise]:
    return [e for e in load() if e.chapter == chapter]


# ---------------------------------------------------------------------------------------------- messages
@dataclass(frozen=True)
class Part:
    """A part of the book (a caption of _toc.yml), its chapters, and what devcourse says when its last
    exercise passes (course.toml's [[parts]] entry of the same caption)."""
    caption: str
    chapters: tuple[str, ...]
    done: str = ""


def book_parts(toc_file: Path = ROOT / "_toc.yml") -> list[tuple[str, list[str]]]:
    """[(caption, [chapter...])] in book order: _toc.yml decides which chapter is in which part."""
    import yaml  # not needed by a check: imported here, not with the module

    toc = yaml.safe_load(toc_file.read_text(encoding="utf-8"))
    return [(part.get("caption", ""), [Path(ch["file"]).name for ch in part.get("chapters", []) if "file" in ch])
            for part in toc.get("parts", [])]


def message(key: str, path: Path = COURSE_FILE) -> str:
    """course.toml's [messages] text `key` ("welcome", "finished"); empty when it has none."""
    return _read(path).get("messages", {}).get(key, "").strip()


def parts(path: Path = COURSE_FILE) -> list[Part]:
    """The book's parts that have exercises, in book order, each with its end-of-part text from course.toml."""
    texts = {p["caption"]: p.get("done", "").strip() for p in _read(path).get("parts", [])}
    chapters_with_exercises = {e.chapter for e in load(path)}
    return [Part(caption, tuple(chapters), texts.get(caption, ""))
            for caption, chapters in book_parts() if chapters_with_exercises & set(chapters)]


def part_of(ex: Exercise) -> Part | None:
    return next((p for p in parts() if ex.chapter in p.chapters), None)
