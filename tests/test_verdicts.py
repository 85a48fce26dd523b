"""The verdict tables written on real GPUs by tools/verdicts.py (via tools/on_gpu.sh), read as they came out:
they must come from machines with GPUs, cover every exercise and submission of the course as it is now, and
show each simulated device giving the verdict of the real device it stands for."""

import json

import pytest

from grader import ROOT
from grader.catalog import course
from grader.authoring import gpu_tables
from tools.verdicts import merged, submissions

TABLES = gpu_tables.tables()
# Exercises whose rows await a GPU run, per table (grader/verdicts/pending.toml says why).
PENDING = gpu_tables.pending()
# What each simulated leg stands for.
COUNTERPART = {"sim:0": "cuda:0", "sim:1": "cuda:1", "sim:0+sim:1": "cuda:0+cuda:1"}


def _rows(name: str) -> list[dict]:
    """The table's rows of submissions the course still has (a regraded table may keep rows of removed ones)."""
    current = {(ex.name, label) for ex in course.load() for label in submissions(ex)}
    return [r for r in TABLES[name]["rows"] if (r["exercise"], r["submission"]) in current
            and r["exercise"] not in PENDING.get(name, ()) and not _waits_for_the_other_table(name, r)]


def _waits_for_the_other_table(name: str, row: dict) -> bool:
    """A one-GPU row that reads the two-GPU table's verdicts (see _real_verdicts), whose row there is pending."""
    return (len(TABLES[name]["machine"]["gpus"]) == 1 and _passes_on_one_gpu(row["exercise"], row["submission"])
            and any(row["exercise"] in PENDING.get(other, ()) for other, t in TABLES.items()
                    if len(t["machine"]["gpus"]) == 2))


def test_there_are_tables_for_one_gpu_and_two():
    counts = sorted(len(t["machine"]["gpus"]) for t in TABLES.values())
    assert 1 in counts and 2 in counts, f"tables found for GPU counts {counts}"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_table_was_made_on_gpus_with_the_course_as_it_is(name):
    table = TABLES[name]
    for m in [table["machine"], *(again["machine"] for again in table.get("regraded", []))]:
        assert m["gpus"] and m["driver"] and "+cu" in m["torch"], m
        assert len(m["gpus"]) == len(table["machine"]["gpus"]), m
    missing = [(ex.name, label) for ex in course.load()
               for label in gpu_tables.missing_rows(ex, list(submissions(ex))).get(name, [])]
    assert not missing, (f"{name}: not graded on the GPU machine (rerun tools/on_gpu.sh, or list the exercise in "
                         f"pending.toml: devcourse dev check NAME --await-gpu): {missing[:10]}")
    for r in table["rows"]:
        # A check that needs a pair of devices has no CUDA leg on one GPU: its rows hold only the simulated pair.
        singles = [leg for leg in r["verdicts"] if leg != "cpu" and "+" not in leg]
        if "accelerator" in course.get(r["exercise"]).legs and (singles or len(table["machine"]["gpus"]) > 1):
            assert any(leg.startswith("cuda:") for leg in r["verdicts"]), f"{name}: {r['exercise']}/{r['submission']}"


def test_pending_regrades_name_exercises_of_the_course():
    names = {ex.name for ex in course.load()}
    assert set(PENDING) <= set(TABLES), sorted(set(PENDING) - set(TABLES))
    for table, pending in PENDING.items():
        assert pending <= names, f"{table}: not exercises of the course: {sorted(pending - names)}"


def _says(exercise: str, submission: str, tag: str) -> bool:
    f = ROOT / "tests" / "submissions" / exercise / f"{submission}.py"
    return f.exists() and any(line.startswith(tag) for line in f.read_text().splitlines()[:3])


def _passes_on_cuda(exercise: str, submission: str) -> bool:
    """A wrong submission may pass on CUDA where the simulator stands for another kind of accelerator (code that
    only knows CUDA); its file says so on a line '# on cuda: passes (why)', a shipped file in course.toml's
    shipped_passes_on_cuda."""
    if submission == "shipped":
        return bool(course.get(exercise).shipped_passes_on_cuda)
    return _says(exercise, submission, "# on cuda: passes")


def _passes_on_one_gpu(exercise: str, submission: str) -> bool:
    """A wrong submission may be right on a machine with one GPU and wrong with two (the last card is the current
    one where there is one card); its file says so on a line '# on one gpu: passes (why)'. The simulator always
    has two devices: on a one-GPU machine its legs stand for the real legs of the two-GPU table."""
    return _says(exercise, submission, "# on one gpu: passes")


def _real_verdicts(name: str, row: dict) -> dict:
    if len(TABLES[name]["machine"]["gpus"]) == 1 and _passes_on_one_gpu(row["exercise"], row["submission"]):
        two = next(other for other, t in TABLES.items() if len(t["machine"]["gpus"]) == 2)
        return next(r["verdicts"] for r in _rows(two)
                    if (r["exercise"], r["submission"]) == (row["exercise"], row["submission"]))
    return row["verdicts"]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_simulated_and_real_devices_agree(name):
    disagreements = []
    for r in _rows(name):
        v = r["verdicts"]
        if _passes_on_cuda(r["exercise"], r["submission"]):
            assert all(v[leg] == "fail" for leg in v if leg.startswith("sim")), (r, "must still fail on the sim")
            continue
        real_v = _real_verdicts(name, r)
        for sim, real in COUNTERPART.items():
            if sim in v and real in real_v and v[sim] != real_v[real]:
                disagreements.append(f"{r['exercise']}/{r['submission']}: {sim} {v[sim]}, {real} {real_v[real]}")
    assert not disagreements, "\n".join(disagreements)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_expected_verdicts_on_the_gpu(name):
    # Solutions and right_* pass everywhere; wrong_* fail somewhere; shipped files fail on the GPU.
    for r in _rows(name):
        v, label = r["verdicts"], r["submission"]
        where = f"{r['exercise']}/{label}"
        if label == "solution" or label.startswith("right_"):
            assert set(v.values()) == {"pass"}, (where, v, r["failures"])
        elif label.startswith("wrong_") or label == "shipped":
            assert "fail" in v.values(), (where, v)


def test_regrading_some_exercises_replaces_their_rows_and_says_so():
    gpus = {"gpus": ["H100", "H100"], "driver": "1", "torch": "2.11.0+cu130", "date": "then"}
    row = lambda ex, sub, v: {"exercise": ex, "submission": sub, "verdicts": {"cuda:0": v}, "failures": []}
    table = {"machine": gpus, "seconds": 9.0, "rows": [row("a", "solution", "fail"), row("b", "solution", "pass")]}
    out = merged(json.loads(json.dumps(table)), [row("a", "solution", "pass")], {**gpus, "date": "now"}, 1.0)
    assert sorted((r["exercise"], r["verdicts"]["cuda:0"]) for r in out["rows"]) == [("a", "pass"), ("b", "pass")]
    assert out["machine"]["date"] == "then" and out["regraded"][0]["exercises"] == ["a"]
    with pytest.raises(SystemExit):
        merged(table, [], {**gpus, "gpus": ["H100"]}, 1.0)


def test_a_run_writes_each_exercise_as_it_is_graded_and_merges_into_the_table(tmp_path):
    """tools/verdicts.py --only, run for real (on this machine's legs): the rows of both exercises land in the
    table, in the course's order, the regrading is noted, and the partial file written along the way is gone."""
    import subprocess
    import sys

    table = tmp_path / "t.json"
    table.write_text(json.dumps({"machine": {"gpus": []}, "rows": []}))
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "verdicts.py"), "--out", str(table), "--jobs", "2",
                          "--only", "pick_device", "noise_batch"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    out = json.loads(table.read_text())
    names = [r["exercise"] for r in out["rows"]]
    expected = [(ex.name, label) for name in ("noise_batch", "pick_device") for ex in [course.get(name)]
                for label in submissions(ex)]
    assert [(r["exercise"], r["submission"]) for r in out["rows"]] == expected, names
    assert out["regraded"][0]["exercises"] == ["noise_batch", "pick_device"]
    assert not (tmp_path / "t.partial.json").exists()
    shipped = next(r for r in out["rows"] if r["submission"] == "shipped" and r["exercise"] == "noise_batch")
    assert shipped["verdicts"]["sim:1"] == "fail" and shipped["verdicts"]["cpu"] == "pass", shipped
