"""The simulated device is installed once in this pytest process (process-wide,
irreversible; grader/simulated/registration.py lists what it changes).  Tests that
need another configuration (count, profile, capacity, no install) run a subprocess."""
import os
import sys

import pytest

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import grader.simulated as gs  # noqa: E402

if gs.is_supported():
    gs.install(count=2, profile="cuda")


def pytest_collection_modifyitems(config, items):
    if not gs.is_supported():
        skip = pytest.mark.skip(reason="torch lacks the Python PrivateUse1 backend API (needs >= 2.11)")
        for item in items:
            if "simulated" in str(item.fspath):
                item.add_marker(skip)


@pytest.fixture
def rec():
    with gs.record() as r:
        yield r
