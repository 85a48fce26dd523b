"""`devcourse doctor` on realistic scripts (tests/doctor/): every bug planted in NAME_buggy.py (a `# BUG: CODE`
comment on its line) is found at that line and nothing else is reported; nothing at all on NAME_fixed.py.
Several scripts have several phases (training, evaluation, a checkpoint saved and resumed, a server, a
benchmark) and several bugs, some after a device mismatch: every phase runs and every bug shows in one run.
Each script runs through the real doctor: its own confined process, on the simulated accelerator, or on the
device that DOCTOR_DEVICE names (tools/on_gpu.sh: cuda:1 on a machine with two GPUs, where the main device has
index 1 as sim:1 has; there no script is read as another device, so the cuda-only notes are not expected)."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.doctor import diagnose

DEVICE = os.environ.get("DOCTOR_DEVICE", "sim:1")

SCRIPTS = Path(__file__).parent / "doctor"
PAIRS = sorted(p.name[: -len("_buggy.py")] for p in SCRIPTS.glob("*_buggy.py"))
MARK = re.compile(r"#\s*BUG:\s*(.+)$")


def planted(path: Path) -> set[tuple[str, int]]:
    out = set()
    for number, text in enumerate(path.read_text().splitlines(), 1):
        match = MARK.search(text)
        if match:
            out.update((code, number) for code in match.group(1).split()
                       if not (code == "cuda-only" and DEVICE.startswith("cuda")))
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every script's result, two at a time (each waits mostly for its own process)."""
    files = [SCRIPTS / f"{name}_{kind}.py" for name in PAIRS for kind in ("buggy", "fixed")]

    def one(path):
        return path.name, diagnose(str(path), device=DEVICE, cwd=str(tmp_path_factory.mktemp(path.stem)),
                                   timeout=300)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, files))


def test_every_pair_is_here():
    assert {"classifier", "language_model", "finetune_amp", "metrics", "model_parallel", "train_eval_resume",
            "serve_bench"} <= set(PAIRS)
    for name in PAIRS:
        assert (SCRIPTS / f"{name}_fixed.py").is_file()
        assert planted(SCRIPTS / f"{name}_buggy.py")


def _found(result) -> set[tuple[str, int]]:
    return {(f["code"], f["line"]) for f in result["findings"]}


@pytest.mark.parametrize("name", PAIRS)
def test_every_planted_bug_is_found_at_its_line(results, name):
    result = results[f"{name}_buggy.py"]
    assert result["outcome"] == "finished", result
    expected = planted(SCRIPTS / f"{name}_buggy.py")
    found = _found(result)
    assert expected - found == set(), f"missed: {expected - found}; found {found}\n{result.get('output')}"
    assert found - expected == set(), f"reported but not planted: {found - expected}"
    for f in result["findings"]:
        assert f["file"] == str(SCRIPTS / f"{name}_buggy.py")
        assert f["source"] == (SCRIPTS / f"{name}_buggy.py").read_text().splitlines()[f["line"] - 1].strip()
        assert f["section"]["url"].endswith(f["section"]["url"].split("#")[1])


@pytest.mark.parametrize("name", PAIRS)
def test_nothing_on_the_fixed_twin(results, name):
    result = results[f"{name}_fixed.py"]
    assert result["outcome"] == "finished", result
    assert result["loops_cut"] and all(loop["after"] == 3 for loop in result["loops_cut"])
    assert result["findings"] == [], [(f["code"], f["line"], f["message"]) for f in result["findings"]]


def test_per_step_traffic_and_memory_are_measured(results):
    result = results["classifier_fixed.py"]
    per = result["per_step"]
    assert per["h2d"]["copies"] == 2 and per["h2d"]["pinned"] == 2  # x and y, from the pinned loader
    assert per["h2d"]["bytes"] == 32 * 64 * 4 + 32 * 8
    assert per["host_reads"] == 0 and per["syncs"] == 0
    assert result["memory"]["peak_bytes"] > 0
    assert result["memory"]["held_at_peak"][0]["line"] is not None


def test_every_phase_runs_with_its_loops_cut(results):
    # training (two epochs, then one after resuming), evaluation after each, the checkpoint saved and loaded
    for kind in ("buggy", "fixed"):
        result = results[f"train_eval_resume_{kind}.py"]
        assert "validation loss and accuracy:" in result["output"] and "after resuming:" in result["output"]
        cut = {loop["line"]: loop["cut"] for loop in result["loops_cut"]}
        assert cut == {29: 3, 42: 2}, cut  # the batch loop in 3 epochs, the evaluation's loop twice
        assert result["steps"]["optimizer_steps"] == 9
    served = results["serve_bench_buggy.py"]
    assert "median latency" in served["output"] and "forward:" in served["output"]


def test_a_mismatch_is_reported_where_the_stray_was_made_and_the_script_goes_on(results):
    findings = {(f["code"], f["line"]): f for f in results["serve_bench_buggy.py"]["findings"]}
    mask = findings[("device-mismatch", 21)]  # the causal mask made on the CPU in forward
    assert [r["line"] for r in mask["related"]] == [22]  # its use, in the attention
    assert "`causal` is on cpu" in mask["message"] and f"went on as if it had been on {DEVICE}" in mask["message"]
    table = findings[("device-mismatch", 41)]  # the batch dict that moved the ids away from the CPU table
    assert f"Either move `table` to {DEVICE}" in table["message"] and "keep `ids` there" in table["message"]
    prior = {(f["code"], f["line"]): f for f in results["train_eval_resume_buggy.py"]["findings"]}[
        ("left-behind", 15)]  # the plain attribute, where register_buffer goes
    assert [r["line"] for r in prior["related"]] == [52, 58, 18]  # the two moves, the use


def test_sarif_carries_related_locations(results):
    from grader.doctor import render

    log = render.sarif(results["serve_bench_buggy.py"], base=str(SCRIPTS))
    mask = next(r for r in log["runs"][0]["results"] if r["locations"][0]["physicalLocation"]["region"]
                ["startLine"] == 21)
    assert mask["relatedLocations"] == [{"id": 1, "message": {"text": "the operation that mixed devices"},
                                         "physicalLocation": {"artifactLocation": {"uri": "serve_bench_buggy.py"},
                                                              "region": {"startLine": 22}}}]


BOOK = Path(__file__).resolve().parent.parent / "book"
QUOTED = re.compile(r"^(ERROR|WARNING|NOTE) tests/doctor/(\w+\.py):(\d+)  ([\w-]+)  ", re.M)


def _notes():
    for page in sorted(BOOK.glob("*.md")):
        text = page.read_text()
        if "### On your own code" in text:
            yield page.stem, text[text.index("### On your own code"):]


def test_every_chapter_with_exercises_ends_with_a_note_on_your_own_code():
    from grader.catalog import course

    # A chapter whose bugs the doctor does not find yet says so in grader/doctor/FINDS.md instead of a note.
    finds = (Path(__file__).parent.parent / "grader" / "doctor" / "FINDS.md").read_text()
    not_yet = set(re.findall(r"^\| ([a-z-]+) \| no finding of its own yet", finds, flags=re.M))
    chapters = {ex.explained_in.partition("#")[0] for ex in course.load() if ex.explained_in}
    assert chapters - not_yet <= {page for page, _ in _notes()}


@pytest.mark.skipif(DEVICE != "sim:1", reason="the book quotes the doctor on sim:1")
@pytest.mark.parametrize("page", [page for page, _ in _notes()])
def test_the_books_notes_quote_what_the_doctor_says(results, page):
    note = dict(_notes())[page]
    quoted = QUOTED.findall(note)
    assert quoted, f"{page}: its note quotes no finding"
    for level, script, line, code in quoted:
        found = {(f["code"], f["line"], f["level"]) for f in results[script]["findings"]}
        assert (code, int(line), level.lower()) in found, f"{page} quotes {code} at {script}:{line}"
        source = (SCRIPTS / script).read_text().splitlines()[int(line) - 1].strip()
        assert f"{line:>4} | {source}" in note
    # Each quoted finding's message lines are the doctor's own, in order, and whole: a quote that stopped at
    # "Choose the device once, for every accelerator:" left out the code it introduces (issue 41).
    for block in re.findall(r"^((?:ERROR|WARNING|NOTE) tests/doctor/.*?)(?=^\S|\Z)", note, re.M | re.S):
        _, script, line, code = QUOTED.match(block).groups()
        finding = next(f for f in results[script]["findings"] if (f["code"], f["line"]) == (code, int(line)))
        # the message's lines, then the related lines ("see line N (...)"), which are the finding's `related`
        quoted = [ln for ln in block.splitlines()[2:] if ln.strip() and not ln.startswith("    see line ")]
        said = ["    " + ln for ln in finding["message"].splitlines()]
        assert quoted == said[:len(quoted)], f"{page}: the quote of {code} at {script}:{line} is not the doctor's"
        related = [int(n) for n in re.findall(r"^    see line (\d+)", block, re.M)]
        assert related == [r["line"] for r in finding.get("related", [])][:len(related)], (page, code, related)
        assert not quoted[-1].rstrip().endswith(":"), f"{page}: the quote of {code} stops before what it introduces"
