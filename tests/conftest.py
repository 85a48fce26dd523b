import os
import shutil
import tempfile
from pathlib import Path

import pytest

from grader import simulated
from grader.catalog import course

# The tests grade through warm workers of their own, ended when the session ends.
_DAEMON_DIR = tempfile.mkdtemp(prefix="devcourse-tests-")
os.environ.setdefault("DEVCOURSE_DAEMON_DIR", _DAEMON_DIR)
# ... and keep the learner's progress (devcourse list, check, hint) in a folder of their own, not the repository's.
os.environ.setdefault("DEVCOURSE_STATE_DIR", tempfile.mkdtemp(prefix="devcourse-tests-state-"))


@pytest.fixture(scope="session", autouse=True)
def _grading_daemon():
    yield
    from grader.engine import daemon

    daemon.stop()


def pytest_report_header(config):
    return f"device-course: {len(course.load())} exercises; simulated accelerator supported: {simulated.is_supported()}"


@pytest.fixture(scope="session")
def exercises():
    return course.load()


@pytest.fixture
def shared():
    """A folder submissions may write to and the test reads: grading workers write only to a private folder
    and /dev/shm (grader/guard/sandbox.py), so it is made in /dev/shm where there is one, writable by every user."""
    folder = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    os.chmod(folder, 0o777)  # where the suite runs as root, gradings run as nobody
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
