"""The verdict tables recorded on real GPUs (grader/verdicts/*.json, written by tools/verdicts.py through
tools/on_gpu.sh): each exercise's shipped file, solution and other submissions have a row in each table, from
their current grader, or the exercise is listed in grader/verdicts/pending.toml as awaiting a GPU run (the
route for an author without GPUs: the maintainers' next GPU run fills its rows and empties the list).

A row is known to be older than its grader when the table's simulated verdicts (sim:0, sim:1, graded on the GPU
machine by the same simulator) differ from this machine's."""

from __future__ import annotations

import json
import re
import tomllib
from functools import cache

from grader import ROOT
from grader.engine import runner
from grader.catalog import course
from grader.authoring import Problem

FOLDER = ROOT / "grader" / "verdicts"
PENDING_FILE = FOLDER / "pending.toml"
#: The maintainers' run on a machine with two GPUs (tools/GPU_RUNS.md); its tables are copied into grader/verdicts/.
GPU_RUN = "tools/on_gpu.sh OUT verdicts"


def await_gpu_command(name: str) -> str:
    return f"devcourse dev check {name} --await-gpu"


@cache
def tables() -> dict[str, dict]:
    """{table name ("1gpu", "2gpu"): the table}."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(FOLDER.glob("*.json"))}


def pending() -> dict[str, set[str]]:
    """{table name: the exercises whose rows in it await a GPU run}."""
    if not PENDING_FILE.exists():
        return {}
    return {name: set(t.get("exercises", []))
            for name, t in tomllib.loads(PENDING_FILE.read_text(encoding="utf-8")).items()}


def verdicts(grade: runner.Grade) -> dict[str, str]:
    """'pass' or 'fail' for each leg (a whole-process failure counts against each leg of that process)."""
    def process(leg: str) -> str:
        return "sim" if leg.startswith("sim") else "real"

    ran = {r.leg for r in grade.ran if r.check != "(grader process)"}
    whole = {process(r.leg) for r in grade.failures if r.check == "(grader process)"}
    out = {leg: "fail" if process(leg) in whole or any(r.leg == leg for r in grade.failures) else "pass"
           for leg in sorted(ran)}
    for name in whole - {process(leg) for leg in ran}:  # nothing of that process ran at all
        out[f"({name})"] = "fail"
    return out


def missing_rows(ex: course.Exercise, labels: list[str]) -> dict[str, list[str]]:
    """{table: labels of the exercise it has no row for}, for the tables that do not list it as pending."""
    waiting = pending()
    out = {}
    for name, table in tables().items():
        if ex.name in waiting.get(name, ()):
            continue
        graded = {r["submission"] for r in table["rows"] if r["exercise"] == ex.name}
        missing = [label for label in labels if label not in graded]
        if missing:
            out[name] = missing
    return out


def awaiting(ex: course.Exercise) -> list[str]:
    """The tables whose rows of this exercise await a GPU run (pending.toml)."""
    return sorted(name for name, names in pending().items() if ex.name in names)


def problems(ex: course.Exercise, graded: dict[str, runner.Grade] | None = None) -> list[Problem]:
    """Rows missing from a table, and rows whose simulated verdicts differ from this machine's (given `graded`,
    {label: a grade of it here})."""
    from grader.authoring.submissions import submissions

    labels = list(submissions(ex))
    fix = (f"without 2 GPUs: {await_gpu_command(ex.name)} (lists it as awaiting the maintainers' GPU run); on a "
           f"machine with 2 GPUs: ONLY={ex.name} {GPU_RUN}, then copy OUT/*gpu.json and *gpu.md into grader/verdicts/")
    found = [Problem(f"grader/verdicts/{name}.json has no row for {', '.join(missing)} (the verdicts on real GPUs)",
                     fix, ex.name)
             for name, missing in missing_rows(ex, labels).items()]
    if not graded:
        return found
    waiting = set(awaiting(ex))
    for name, table in tables().items():
        if name in waiting:
            continue
        for row in table["rows"]:
            if row["exercise"] != ex.name or row["submission"] not in graded:
                continue
            here = verdicts(graded[row["submission"]])
            differ = [f"{leg} {row['verdicts'][leg]} there, {here[leg]} here" for leg in sorted(here)
                      if leg.startswith("sim") and leg in row["verdicts"] and row["verdicts"][leg] != here[leg]]
            if differ:
                found.append(Problem(f"grader/verdicts/{name}.json's row for {row['submission']} is older than its "
                                     f"grader or file ({'; '.join(differ)})", fix, ex.name))
    return found


def await_gpu(name: str) -> list[str]:
    """List the exercise in pending.toml under every table; the tables it was added to."""
    course.get(name)  # an unknown name is refused (KeyError, with close names)
    text = PENDING_FILE.read_text(encoding="utf-8")
    added = []
    for table, names in sorted(pending().items()):
        if name in names:
            continue
        section = re.search(rf"^\[{re.escape(table)}\]\s*\n(?:.*\n)*?exercises\s*=\s*\[[^\]]*\]", text, re.M)
        if section is None:
            raise ValueError(f"{PENDING_FILE.relative_to(ROOT)}: no 'exercises = [...]' under [{table}]")
        listed = json.dumps(sorted(names | {name}))
        start = section.start() + section.group(0).rindex("exercises")
        text = text[:start] + f"exercises = {listed}" + text[section.end():]
        added.append(table)
    PENDING_FILE.write_text(text, encoding="utf-8")
    return added
