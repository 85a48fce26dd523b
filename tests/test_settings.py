"""The engine's numeric settings (grader.engine.settings): a value the grading processes cannot use stops the command
that asked for a grading, with a message naming the variable, and starts no grading process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader import ROOT
from grader.engine import daemon, settings

BAD = ["four", "0", "-1", "nan", "2.5", "1e3x"]


@pytest.mark.parametrize("value", BAD)
def test_a_bad_max_jobs_is_refused_with_the_variables_name(monkeypatch, value):
    monkeypatch.setenv("DEVCOURSE_MAX_JOBS", value)
    with pytest.raises(settings.SettingError) as err:
        settings.check()
    text = str(err.value)
    assert text.startswith(f"DEVCOURSE_MAX_JOBS is set to {value!r}") and "a whole number of at least 1" in text
    assert f"default ({max(2, os.cpu_count() or 2)})" in text
    assert settings.max_jobs(lenient=True) == max(2, os.cpu_count() or 2)


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan"])
def test_a_bad_idle_time_is_refused_with_the_variables_name(monkeypatch, value):
    monkeypatch.setenv("DEVCOURSE_IDLE_SECONDS", value)
    with pytest.raises(settings.SettingError, match=r"DEVCOURSE_IDLE_SECONDS is set to .*a number of seconds above "
                                                    r"0.*default \(900 s\)"):
        settings.check()
    assert settings.idle_seconds(lenient=True) == 900.0


@pytest.mark.parametrize("value", ["fast", "0", "nan"])
def test_a_bad_check_timeout_for_a_class_is_refused_before_any_grading(monkeypatch, value):
    monkeypatch.setenv("DEVCOURSE_CHECK_TIMEOUT", value)
    with pytest.raises(daemon.DaemonError, match=r"DEVCOURSE_CHECK_TIMEOUT is set to .*a number of seconds above 0.*"
                                                  r"default \(each exercise's own limit, from course.toml\)"):
        daemon.ensure(Path("/nonexistent"))
    assert settings.check_timeout(lenient=True) is None


def test_good_values_and_unset_ones_are_taken(monkeypatch):
    monkeypatch.setenv("DEVCOURSE_MAX_JOBS", " 3 ")
    monkeypatch.setenv("DEVCOURSE_IDLE_SECONDS", "0.5")
    monkeypatch.setenv("DEVCOURSE_CHECK_TIMEOUT", "7")
    settings.check()
    assert (settings.max_jobs(), settings.idle_seconds(), settings.check_timeout()) == (3, 0.5, 7.0)
    monkeypatch.setenv("DEVCOURSE_MAX_JOBS", "")
    monkeypatch.delenv("DEVCOURSE_IDLE_SECONDS")
    monkeypatch.delenv("DEVCOURSE_CHECK_TIMEOUT")
    assert (settings.max_jobs(), settings.idle_seconds(), settings.check_timeout()) == (
        max(2, os.cpu_count() or 2), 900.0, None)


def test_the_daemon_is_not_started_with_a_bad_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("DEVCOURSE_MAX_JOBS", "four")
    with pytest.raises(daemon.DaemonError, match="DEVCOURSE_MAX_JOBS is set to 'four'"):
        daemon.ensure(tmp_path / "daemon")
    assert not (tmp_path / "daemon").exists()  # nothing was started there


def test_devcourse_check_says_what_is_wrong_and_starts_nothing(tmp_path):
    env = {**os.environ, "DEVCOURSE_MAX_JOBS": "four", "DEVCOURSE_DAEMON_DIR": str(tmp_path / "daemon"),
           "DEVCOURSE_STATE_DIR": str(tmp_path / "state")}
    out = subprocess.run([sys.executable, "-m", "grader", "check", "noise_batch"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "DEVCOURSE_MAX_JOBS is set to 'four', but it takes a whole number of at least 1" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    assert not (tmp_path / "daemon").exists()


def test_classroom_autograde_says_what_is_wrong(monkeypatch, tmp_path, capsys):
    pytest.importorskip("nbgrader")  # a GPU machine may lack it; CI has it
    from grader.classroom import autograde, cli, isolation

    monkeypatch.setenv("DEVCOURSE_MAX_JOBS", "four")
    monkeypatch.setattr(isolation, "status", lambda: isolation.Isolation(True, "stand-in"))
    monkeypatch.setattr(autograde, "create_students", lambda root, students: None)  # no gradebook needed
    args = cli.argparse.Namespace(unisolated=False, student="learner000", root=str(tmp_path), assignment="part1",
                                  workers=None, scheduler=None, no_force=False)
    assert cli.cmd_autograde(args) == 2
    assert "DEVCOURSE_MAX_JOBS is set to 'four'" in capsys.readouterr().out
