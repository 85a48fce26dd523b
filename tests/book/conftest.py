import functools
import http.server
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grader import ROOT


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """The book built from its sources and recorded outputs, warnings as errors, as `make book` does."""
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).with_name("jupyter-book")
    start = time.perf_counter()
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=600,
    )
    seconds = time.perf_counter() - start
    print(f"\nbook build: {seconds:.1f} s")  # a figure for the benchmark notes, not a pass/fail criterion
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out / "_build" / "html"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def book_url(built_book):
    handler = functools.partial(QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")
