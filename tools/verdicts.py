"""The verdict table: every exercise's shipped file, its solution and its other submissions
(tests/submissions/), graded on every leg of this machine. Run on GPU machines by tools/on_gpu.sh; the
tables it wrote are committed as they came out (grader/verdicts/), with the machine inside, and
tests/test_verdicts.py reads them: a simulated device must give the same verdict as the real one it stands
for (sim:0 as cuda:0, sim:1 as cuda:1, the pair sim:0+sim:1 as cuda:0+cuda:1).

    python tools/verdicts.py --out grader/verdicts/2gpu.json [--markdown grader/verdicts/2gpu.md] [--jobs 4]

With --jobs N, N processes grade at once, one exercise at a time each, through warm grading processes of
their own. With --only NAME..., only those exercises are graded again, their rows replaced in the table
already at --out (made on a machine with as many GPUs); the table keeps its machine and lists each such
regrading with its own. Each exercise's rows are written to OUT.partial.json as soon as it is graded, so a run
cut by a time limit keeps what it finished (a later --only run can start from that file).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.engine import daemon, machine, runner  # noqa: E402
from grader.catalog import course  # noqa: E402
from grader.authoring.gpu_tables import verdicts  # noqa: E402
from grader.authoring.submissions import submissions  # noqa: E402


@contextlib.contextmanager
def own_daemon():
    """Grading processes of this process's own (one per pool process, so that they grade side by side)."""
    os.environ["DEVCOURSE_DAEMON_DIR"] = tempfile.mkdtemp(prefix="devcourse-tools-")
    try:
        yield
    finally:
        daemon.stop()


def grade_chunk(items: list[tuple[str, str, str]]) -> list[dict]:
    """Grade (exercise, label, path) items through a daemon of this process's own."""
    rows = []
    with own_daemon():
        for name, label, path in items:
            g = runner.grade(course.get(name), Path(path))
            rows.append({"exercise": name, "submission": label, "verdicts": verdicts(g),
                         "failures": sorted({f"{r.leg}: {r.message.splitlines()[0][:160]}" for r in g.failures})})
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--markdown", type=Path)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--only", nargs="+", metavar="EXERCISE", help="regrade these, in the table at --out")
    args = p.parse_args()
    start = time.perf_counter()
    exercises = [course.get(name) for name in args.only] if args.only else course.load()
    # one task per exercise, the largest first, so that the pool ends together and a cut run keeps whole exercises
    chunks = sorted(([(ex.name, label, str(path)) for label, path in submissions(ex).items()] for ex in exercises),
                    key=len, reverse=True)
    partial = args.out.with_suffix(".partial.json")
    here = machine.describe()
    earlier = json.loads(args.out.read_text()) if args.only else None
    everything = [(ex.name, label) for ex in course.load() for label in submissions(ex)]
    order = {key: i for i, key in enumerate(everything)}

    def table_of(graded: list[dict], seconds: float) -> dict:
        """The table with `graded`, in the course's order: a new one, or the one at --out with those rows replaced."""
        seconds = round(seconds, 1)
        if earlier is not None:
            table = merged(copy.deepcopy(earlier), graded, here, seconds)
        else:
            table = {"machine": here, "seconds": seconds, "rows": list(graded)}
        table["rows"].sort(key=lambda r: order.get((r["exercise"], r["submission"]), len(order)))
        return table

    graded: list[dict] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for rows in pool.imap_unordered(grade_chunk, chunks):
            graded += rows
            partial.write_text(json.dumps(table_of(graded, time.perf_counter() - start), indent=1) + "\n")
    seconds = round(time.perf_counter() - start, 1)
    table = table_of(graded, seconds)
    args.out.write_text(json.dumps(table, indent=1) + "\n")
    partial.unlink(missing_ok=True)
    if args.markdown:
        args.markdown.write_text(markdown(table))
    print(f"{len(graded)} submissions graded in {seconds} s -> {args.out}")


def merged(table: dict, graded: list[dict], here: dict, seconds: float) -> dict:
    """`table` with the rows of the exercises in `graded` replaced by those, and the regrading noted."""
    if len(here["gpus"]) != len(table["machine"]["gpus"]):
        sys.exit(f"--only: this machine has {len(here['gpus'])} GPUs, the table's had {len(table['machine']['gpus'])}")
    names = sorted({r["exercise"] for r in graded})
    table["rows"] = [r for r in table["rows"] if r["exercise"] not in names] + graded
    table.setdefault("regraded", []).append({"exercises": names, "machine": here, "seconds": seconds})
    return table


def markdown(table: dict) -> str:
    m = table["machine"]
    legs = sorted({leg for r in table["rows"] for leg in r["verdicts"]})
    lines = [f"# Verdicts: {len(m['gpus'])} × {m['gpus'][0] if m['gpus'] else 'no GPU'}, driver {m['driver']}, "
             f"torch {m['torch']}, {m['date']}", ""]
    for again in table.get("regraded", []):
        a = again["machine"]
        lines += [f"Graded again: {', '.join(again['exercises'])} ({len(a['gpus'])} × {a['gpus'][0]}, driver "
                  f"{a['driver']}, torch {a['torch']}, {a['date']}).", ""]
    lines += ["| exercise | submission | " + " | ".join(legs) + " |",
              "| --- | --- | " + " | ".join("---" for _ in legs) + " |"]
    for r in table["rows"]:
        lines.append(f"| {r['exercise']} | {r['submission']} | "
                     + " | ".join(r["verdicts"].get(leg, "") for leg in legs) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
