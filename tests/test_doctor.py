"""`devcourse doctor`: its command line and outputs (terminal, plain, --json, --sarif), what it says when a
script crashes, hangs or needs a file it cannot find, its isolation, and how it reads a CUDA-only script."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from grader.catalog import book_links
from grader.doctor import cuda_only, diagnose
from grader.doctor.findings import KINDS

ROOT = Path(__file__).resolve().parent.parent
DEVCOURSE = [sys.executable, "-m", "grader"]

SMALL = '''\
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
w = torch.randn(4, 2, device=device, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(10):
    x = torch.randn(8, 4).to(device)
    loss = (x @ w).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: {loss.item():.3f}")
'''


def doctor(*args, cwd):
    return subprocess.run(DEVCOURSE + ["doctor", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    (folder / "train.py").write_text(SMALL)
    return folder


# ---------------------------------------------------------------------------------------------- the book
@pytest.mark.parametrize("code", sorted(KINDS))
def test_each_kind_links_a_section_of_the_book(code):
    kind = KINDS[code]
    assert book_links.anchor_of(kind.heading) in book_links.sections(kind.page), kind


# ---------------------------------------------------------------------------------------------- CUDA only
def test_a_cuda_only_script_is_read_as_the_simulator_line_for_line():
    source = textwrap.dedent('''\
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        x = torch.ones(2).cuda()
        y = torch.ones(2).cuda(0, non_blocking=True)
        second = "cuda:1"
        with torch.autocast("cuda", dtype=torch.float16):
            pass
        scaler = torch.amp.GradScaler(device_type="cuda")
        index = torch.device("cuda", 0)
        rank = f"cuda:{0}"
        ok = x.is_cuda
        pin = device.type == "cuda"
    ''')
    tree = cuda_only.as_simulator(ast.parse(source), 1)
    text = ast.unparse(tree)
    assert "cuda" not in text
    assert "torch.device('sim:1' if torch.sim.is_available() else 'cpu')" in text
    assert "torch.ones(2).to('sim:1')" in text
    assert "torch.ones(2).to(f'sim:{0}', non_blocking=True)" in text
    assert "second = 'sim:1'" in text
    assert "torch.autocast('sim'" in text and "GradScaler(device_type='sim')" in text
    assert "torch.device('sim', 0)" in text and "f'sim:{0}'" in text and "x.is_sim" in text
    assert "pin = device.type == 'sim'" in text
    lines = source.splitlines()
    found = cuda_only.findings(ast.parse(source), "s.py", lines, "sim:1")
    assert [f.line for f in found] == [2, 3, 4, 5, 6, 8, 9, 10]  # not 12: a comparison checks, it does not choose
    assert all(f.code == "cuda-only" and f.fix == cuda_only.REWRITE for f in found)


def test_the_cuda_only_script_runs_on_the_simulator_and_its_lines_are_reported(small):
    result = diagnose(str(small / "train.py"), cwd=str(small))
    assert result["outcome"] == "finished" and result["device"] == "sim:1"
    codes = [(f["code"], f["line"]) for f in result["findings"]]
    assert codes[0] == ("cuda-only", 2)  # the first finding
    assert ("host-read-per-step", 11) in codes
    assert result["steps"] == {"asked": 3, "optimizer_steps": 3, "batches": 0}
    assert result["loops_cut"] == [{"line": 5, "cut": 1, "after": 3}]
    assert "step 2:" in result["output"] and "step 3:" not in result["output"]
    assert result["isolated"] is True or "Landlock" in result["isolation"] or "isolation" in result["isolation"]


# ---------------------------------------------------------------------------------------------- outputs
def test_plain_text_when_piped_with_an_exit_status(small):
    run = doctor("train.py", cwd=small)
    assert run.returncode == 1, run.stderr  # a warning: host reads every step
    out = run.stdout
    assert "\x1b[" not in out  # piped: no colours
    assert "WARNING train.py:11  host-read-per-step" in out
    assert "   11 | print(f\"step {step}: {loss.item():.3f}\")" in out
    assert "NOTE train.py:2  cuda-only" in out
    assert 'Book: "Round trips inside loops" in Avoiding repeated transfers' in out
    assert "Loops cut after 3 iterations, the script going on after them: line 5." in out
    assert "Per step (the last iteration of the loop at line 5):" in out
    assert "Peak device memory:" in out


def test_a_terminal_gets_the_rich_report(small):
    from rich.console import Console

    from grader.doctor import render

    result = diagnose(str(small / "train.py"), cwd=str(small), steps=2)
    console = Console(record=True, force_terminal=True, width=120)
    render.print_report(console, result, base=str(small))
    text = console.export_text()
    assert "│ print(f\"step" in text and "host-read-per-step" in text
    assert render.exit_status(result) == 1


def test_json(small):
    run = doctor("--json", "--steps", "2", "train.py", cwd=small)
    data = json.loads(run.stdout)
    assert data["steps"]["optimizer_steps"] == 2 and data["loops_cut"] == [{"line": 5, "cut": 1, "after": 2}]
    assert data["device"] == "sim:1"  # the default: a lost index shows
    f = next(f for f in data["findings"] if f["code"] == "host-read-per-step")
    assert f["line"] == 11 and f["level"] == "warning" and f["file"] == str(small / "train.py")
    assert f["section"]["url"].endswith("repeated-transfers.html#round-trips-inside-loops")


#: The parts of the SARIF 2.1.0 schema (docs.oasis-open.org/sarif/sarif/v2.1.0) that code scanning and editors
#: read to place an annotation, with the types and required properties the standard gives them.
SARIF_SHAPE = {
    "type": "object", "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"}, "$schema": {"type": "string"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id"], "properties": {
                                "id": {"type": "string"}, "shortDescription": {
                                    "type": "object", "required": ["text"]},
                                "helpUri": {"type": "string", "format": "uri"},
                                "defaultConfiguration": {"type": "object", "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}}}}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"], "properties": {
                        "ruleId": {"type": "string"}, "ruleIndex": {"type": "integer", "minimum": 0},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": {"type": "object", "required": ["text"]},
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {"type": "object", "required": ["artifactLocation"], "properties": {
                                "artifactLocation": {"type": "object", "required": ["uri"], "properties": {
                                    "uri": {"type": "string"}}},
                                "region": {"type": "object", "required": ["startLine"], "properties": {
                                    "startLine": {"type": "integer", "minimum": 1}}}}}}}}}}}}}}},
}


def test_sarif(small, tmp_path):
    out = tmp_path / "doctor.sarif"
    run = doctor("--sarif", str(out), "--steps", "2", "train.py", cwd=small)
    assert run.returncode == 1 and "SARIF written" in run.stdout
    log = json.loads(out.read_text())
    jsonschema.validate(log, SARIF_SHAPE)
    driver = log["runs"][0]["tool"]["driver"]
    results = log["runs"][0]["results"]
    assert {r["id"] for r in driver["rules"]} == set(KINDS)
    read = next(r for r in results if r["ruleId"] == "host-read-per-step")
    assert driver["rules"][read["ruleIndex"]]["id"] == "host-read-per-step"
    place = read["locations"][0]["physicalLocation"]
    assert place == {"artifactLocation": {"uri": "train.py"}, "region": {"startLine": 11}}
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


# ---------------------------------------------------------------------------------------------- trouble
def _script(folder: Path, source: str) -> Path:
    path = folder / "script.py"
    path.write_text(textwrap.dedent(source))
    return path


def test_a_mismatch_is_reported_at_the_attributes_assignment_and_the_script_goes_on(tmp_path):
    path = _script(tmp_path, '''\
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.scale = torch.ones(4)

            def forward(self, x):
                return self.fc(x) * self.scale

        device = torch.accelerator.current_accelerator()
        model = Net().to(device)
        out = model(torch.randn(2, 4, device=device))
        print("went on:", out.device)
        model(torch.randn(2, 4, device=device)).sum().backward()
        print("backward done")
    ''')
    result = diagnose(str(path), cwd=str(tmp_path))
    assert result["outcome"] == "finished" and "went on: sim:1" in result["output"]
    assert "backward done" in result["output"]  # the backward ran through the operation gone on after
    found = {(f["code"], f["line"]): f for f in result["findings"]}
    assert set(found) == {("left-behind", 8)}  # self.scale = torch.ones(4): where register_buffer goes
    f = found[("left-behind", 8)]
    assert "`self.scale of Net` (a tensor on cpu, a plain attribute)" in f["message"]
    assert "Line 11 then mixed devices (2 times)" in f["message"] and "sim:1 and cpu" in f["message"]
    assert [(r["line"], r["message"]) for r in f["related"]] == [
        (14, "the model's move"), (11, "the operation that mixed devices")]


def test_an_error_the_doctor_cannot_go_on_after_ends_the_run_and_says_so(tmp_path):
    path = _script(tmp_path, '''\
        import torch
        device = torch.accelerator.current_accelerator()
        x = torch.randn(3, device=device)
        x.numpy()
        print("not reached")
    ''')
    result = diagnose(str(path), cwd=str(tmp_path))
    assert result["outcome"] == "crashed" and "not reached" not in result["output"]
    crash = result["findings"][-1]
    assert crash["code"] == "crash" and crash["line"] == 4
    assert "did not run" in crash["message"]


def test_a_script_that_needs_a_missing_file(tmp_path):
    path = _script(tmp_path, '''\
        import torch
        data = torch.load("data/train.pt")
    ''')
    result = diagnose(str(path), cwd=str(tmp_path))
    crash = result["findings"][-1]
    assert result["outcome"] == "crashed" and crash["code"] == "crash" and crash["line"] == 2
    assert "data/train.pt" in crash["message"] and "cannot find" in crash["message"]


def test_the_script_reads_the_folder_and_writes_into_a_scratch_copy(tmp_path):
    (tmp_path / "config.txt").write_text("7")
    path = _script(tmp_path, '''\
        import torch
        n = int(open("config.txt").read())
        torch.save(torch.ones(n), "checkpoint.pt")
        print("saved", torch.load("checkpoint.pt").shape)
    ''')
    result = diagnose(str(path), cwd=str(tmp_path))
    assert result["outcome"] == "finished", result
    assert "saved torch.Size([7])" in result["output"]
    assert not (tmp_path / "checkpoint.pt").exists()  # written in the scratch copy, removed with it


def test_writing_outside_is_refused_with_a_reason(tmp_path):
    from grader.guard import sandbox

    if not sandbox.status().available:
        pytest.skip(sandbox.status().how)
    path = _script(tmp_path, f'''\
        open({str(tmp_path / "config.txt")!r}, "w").write("overwritten")
    ''')
    (tmp_path / "config.txt").write_text("mine")
    result = diagnose(str(path), cwd=str(tmp_path))
    assert result["outcome"] == "crashed" and result["isolated"] is True
    assert "PermissionError" in result["findings"][-1]["message"]
    assert (tmp_path / "config.txt").read_text() == "mine"


def test_a_hang_is_stopped_by_the_time_limit(tmp_path):
    path = _script(tmp_path, '''\
        import time
        while True:
            time.sleep(0.01)
    ''')
    result = diagnose(str(path), cwd=str(tmp_path), timeout=1)  # the clock's limit: limits.wall_limit(1) = 33 s
    assert result["outcome"] == "timeout"
    assert "time limit" in result["message"]


def test_device_sim_is_sim_1_and_a_sync_of_the_current_device_is_named(tmp_path):
    # The script computes where the doctor puts it (sim:1) and synchronizes the current device (sim:0): the sync
    # note must name both. `--device sim` is the default's sim:1, not the current device.
    _script(tmp_path, """\
        import torch

        device = torch.accelerator.current_accelerator()
        w = torch.randn(4, 2, device=device, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        for step in range(5):
            loss = (torch.randn(8, 4, device=device) @ w).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            torch.accelerator.synchronize()
    """)
    run = doctor("--device", "sim", "--json", "script.py", cwd=tmp_path)
    data = json.loads(run.stdout)
    assert data["device"] == "sim:1", data
    [sync] = [f for f in data["findings"] if f["code"] == "sync-per-step"]
    assert sync["line"] == 11
    assert "It waits for sim:0, the current device, not sim:1 where the work runs" in sync["message"], sync


def test_usage_errors(tmp_path):
    assert doctor("missing.py", cwd=tmp_path).returncode == 2
    (tmp_path / "s.py").write_text("print(1)\n")
    assert doctor("--device", "gpu7", "s.py", cwd=tmp_path).returncode == 2
    assert doctor("--steps", "0", "s.py", cwd=tmp_path).returncode == 2
    from grader.doctor import notebook

    with pytest.raises(ValueError, match="--device gpu7: choose one of"):  # the notebook magic's words
        notebook.parse("--device gpu7")


def test_the_scripts_own_arguments_and_exit(tmp_path):
    path = _script(tmp_path, '''\
        import sys
        print("args", sys.argv[1:])
        sys.exit(3)
    ''')
    run = doctor("script.py", "--epochs", "2", cwd=tmp_path)
    assert "exited with status 3" in run.stdout
    assert "args ['--epochs', '2']" in run.stdout


# ---------------------------------------------------------------------------------------------- notebooks
def test_cells_are_joined_line_for_line():
    from grader.doctor import notebook

    joined = notebook.join([
        ("In [1]", "%load_ext grader.magics\nimport torch"),
        ("In [2]", "%%timeit\nx = 1"),  # another cell magic: left out
        ("In [3]", "%%exercise demo\ndef f(x):\n    !echo hi\n    return x"),
        ("In [4]", "def broken(:"),  # does not parse: left out
    ])
    assert joined.source.splitlines() == ["pass", "import torch", "", "def f(x):", "    pass", "    return x"]
    assert joined.where == [("In [1]", 1), ("In [1]", 2), ("In [3]", 1), ("In [3]", 2), ("In [3]", 3),
                            ("In [3]", 4)]


def test_the_notebook_magic_places_findings_at_their_cell_and_line(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    from grader.learner import report

    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("%load_ext grader.magics", store_history=True)
        shell.run_cell("import torch\ndevice = torch.accelerator.current_accelerator() or torch.device('cpu')",
                       store_history=True)
        shell.run_cell("w = torch.randn(4, 2, device=device, requires_grad=True)\n"
                       "opt = torch.optim.SGD([w], lr=0.1)", store_history=True)
        shell.run_cell("for step in range(5):\n"
                       "    loss = (torch.randn(8, 4, device=device) @ w).pow(2).mean()\n"
                       "    opt.zero_grad(); loss.backward(); opt.step()\n"
                       "    if loss > 100:\n"
                       "        print('diverged')", store_history=True)
        displayed = []  # %devcourse shows its report as it runs (a check cell may have a second line)
        monkeypatch.setattr("grader.magics.display", displayed.append)
        shell.run_cell("%devcourse doctor --device sim --steps 2", store_history=True)
    finally:
        InteractiveShell.clear_instance()
    (shown,) = displayed
    assert shown.result["device"] == "sim:1"  # as `devcourse doctor --device sim` reads it
    found = [(f["code"], f["cell"], f["cell_line"]) for f in shown.result["findings"]]
    assert found == [("host-read-per-step", "In [4]", 4)], shown.result
    text = report.render_text(shown.render)
    assert "WARNING In [4], line 4  host-read-per-step" in text
    assert "   4 | if loss > 100:" in text
    assert "<pre" in shown._repr_html_()


def test_endless_output_is_stopped_at_the_output_limit(tmp_path):
    path = _script(tmp_path, '''\
        import sys
        line = "x" * (1 << 20)
        while True:
            sys.stdout.write(line)
    ''')
    result = diagnose(str(path), cwd=str(tmp_path))
    assert result["outcome"] == "output-limit"
    assert "output limit" in result["message"]
    assert len(result["output"]) <= 4000


def test_the_scripts_cuda_arguments_are_read_as_the_simulator(tmp_path):
    assert cuda_only.as_simulator_args(["--device", "cuda", "--other=cuda:0", "--device=cuda", "cudas"]) == \
        ["--device", "sim:1", "--other=sim:0", "--device=sim:1", "cudas"]
    path = _script(tmp_path, '''\
        import argparse, torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cpu")
        print("on", torch.ones(1, device=parser.parse_args().device).device)
    ''')
    result = diagnose(str(path), ["--device", "cuda"], cwd=str(tmp_path))
    assert result["outcome"] == "finished" and "on sim:1" in result["output"]


def test_a_hand_written_loop_is_cut_after_its_iterations(tmp_path):
    path = _script(tmp_path, '''\
        import torch
        device = torch.accelerator.current_accelerator()
        w = torch.zeros(4, device=device, requires_grad=True)
        while True:  # hand-written SGD: no optimizer, no DataLoader; its backward makes it a loop of steps
            loss = (torch.randn(16, 4, device=device) @ w - 1).pow(2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
            if loss.item() < 1e-9:
                break
        print("after the loop")
    ''')
    result = diagnose(str(path), cwd=str(tmp_path))
    assert result["outcome"] == "finished" and "after the loop" in result["output"], result
    assert result["loops_cut"] == [{"line": 4, "cut": 1, "after": 3}]
    assert [(f["code"], f["line"]) for f in result["findings"]] == [("host-read-per-step", 10)]


def test_adams_step_counters_put_on_the_device_by_map_location_are_explained(tmp_path):
    path = _script(tmp_path, '''\
        import torch
        from torch import nn
        device = torch.accelerator.current_accelerator()
        model = nn.Linear(4, 1).to(device)
        optimizer = torch.optim.Adam(model.parameters())
        model(torch.randn(2, 4, device=device)).sum().backward()
        optimizer.step()
        torch.save(optimizer.state_dict(), "optimizer.pt")
        optimizer.load_state_dict(torch.load("optimizer.pt", map_location=device))
        for step in range(10):
            loss = model(torch.randn(2, 4, device=device)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    ''')
    result = diagnose(str(path), cwd=str(tmp_path))
    [read] = result["findings"]
    assert (read["code"], read["line"]) == ("host-read-per-step", 14)
    assert "`step` counters" in read["message"] and 'map_location="cpu"' in read["message"]


def test_a_loop_without_device_work_is_stopped_at_the_time_limit(tmp_path):
    path = _script(tmp_path, '''\
        import torch
        device = torch.accelerator.current_accelerator()
        w = torch.zeros(4, device=device)
        n = 0
        while True:  # nothing on the device: not cut
            n += sum(range(100))
    ''')
    result = diagnose(str(path), cwd=str(tmp_path), timeout=3)
    assert result["outcome"] == "time-up", result
    assert result["loops_cut"] == []


def test_a_loop_inside_a_library_is_stopped_at_the_time_limit_too(tmp_path):
    # No line of the learner's own code comes once the time is up (the loop is a library's, in an environment
    # inside the learner's folder): a second of CPU time later the doctor stops it in any code but torch's, the
    # standard library's and its own.
    library = tmp_path / "env" / "site-packages"
    library.mkdir(parents=True)
    (library / "trainer_lib.py").write_text(textwrap.dedent('''\
        import torch

        def fit():
            device = torch.accelerator.current_accelerator()
            w = torch.zeros(4, device=device, requires_grad=True)
            while True:
                loss = (torch.randn(16, 4, device=device) @ w - 1).pow(2).mean()
                loss.backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                    w.grad = None
    '''))
    path = _script(tmp_path, '''\
        import os, sys
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "env", "site-packages"))
        import trainer_lib
        trainer_lib.fit()
    ''')
    result = diagnose(str(path), cwd=str(tmp_path), timeout=3)
    assert result["outcome"] == "time-up", result


SIGNAL_AT = '''\
import sys, torch
from torch.utils._python_dispatch import TorchDispatchMode
from grader.engine import deferred_stop


class TimeUp(BaseException):
    pass


class SignalAt(TorchDispatchMode):
    """What a signal handler does when its signal lands in the `at`-th op of a backward."""

    def __init__(self, at, script):
        super().__init__()
        self.at, self.script, self.seen = at, script, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if torch._C._current_graph_task_id() != -1:
            self.seen += 1
            if self.seen == self.at:
                deferred_stop.raise_at_next_line(TimeUp, lambda name: name == self.script, sys._getframe())
        return func(*args, **(kwargs or {}))
'''

STOPPED_IN_BACKWARD = '''\
import torch
from grader import simulated
from grader.engine import deferred_stop
from signal_at import SignalAt, TimeUp
simulated.install(count=2)
device = torch.device("sim:1")
w = torch.zeros(4, device=device, requires_grad=True)
w.register_hook(lambda grad: grad * 1)  # the learner's own code, run inside the backward: not stopped there
for at in range(1, 30):
    mode = SignalAt(at, __file__)
    try:
        try:
            with mode:
                loss = (torch.randn(16, 4, device=device) @ w - 1).pow(2).mean()
                loss.backward()
                done = True
        finally:
            deferred_stop.cancel()
    except TimeUp as stop:
        print(at, mode.seen, "stopped at line", stop.__traceback__.tb_lineno, flush=True)
'''


def test_a_stop_that_comes_inside_a_simulated_backward_waits_for_the_learners_next_line(tmp_path):
    # A signal handler that raised there ended the process ("terminate called without an active exception":
    # the engine unwound the error through the simulator's Python device guard); deferred, the backward ends,
    # and the stop comes at the learner's next line after it, wherever in the backward the signal came.
    (tmp_path / "signal_at.py").write_text(SIGNAL_AT)
    script = tmp_path / "stop.py"
    script.write_text(STOPPED_IN_BACKWARD)
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stderr[-2000:]
    stops = [line.split() for line in run.stdout.splitlines()]
    ops = int(stops[0][1])  # the backward's ops on the simulator (a signal at a later one never comes)
    after_backward = STOPPED_IN_BACKWARD.splitlines().index("                done = True") + 1
    assert 5 <= ops < 29 and [(int(at), int(seen), int(lineno)) for at, seen, *_, lineno in stops] == \
        [(at, ops, after_backward) for at in range(1, ops + 1)], run.stdout


def test_a_terminated_probe_is_not_called_out_of_memory():
    from grader.doctor import launch
    said = launch._message("killed", 3, "terminate called without an active exception\n")
    assert "out of memory" not in said and "terminate called" in said and "--timeout" in said
