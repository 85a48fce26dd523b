"""Make the README's pictures of a check: in a terminal (an SVG recorded by rich) and in JupyterLab (a PNG taken
with Playwright and Chromium). Run from a clean checkout:

    python tools/learner_screenshots.py OUTDIR      # writes OUTDIR/check-terminal.svg, OUTDIR/check-jupyterlab.png
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from grader.authoring import notebooks  # noqa: E402
from grader.learner import report  # noqa: E402
from grader.engine import runner  # noqa: E402
from grader.catalog import course  # noqa: E402

NAME = "masked_mean"


def terminal(out: Path) -> None:
    ex = course.get(NAME)
    console = Console(record=True, width=118, force_terminal=True, color_system="truecolor", highlight=False,
                      file=open(os.devnull, "w"))
    console.print(Text("$ devcourse check masked_mean", style="bold"))
    console.print(Text(f"Checking {NAME} (exercises/{ex.path}) ...", style="dim"))
    g = runner.grade(ex, ex.exercise_file)
    report.print_grade(console, g, f"exercises/{ex.path}", hint_command=f"devcourse hint {NAME}")
    console.save_svg(str(out / "check-terminal.svg"), title="devcourse check masked_mean")


def jupyterlab(out: Path, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="devcourse-shot-"))
    shutil.copy(ROOT / "course.toml", work)
    shutil.copytree(ROOT / "exercises", work / "exercises")
    ex = course.get(NAME)
    nb = nbformat.read(notebooks.notebook_path(ex.chapter), 4)
    first = next(i for i, c in enumerate(nb.cells) if c.source.startswith(f"%%exercise {NAME}"))
    nb.cells = [nb.cells[1]] + nb.cells[first - 1:first + 2]  # the set-up cell, then one exercise
    NotebookClient(nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(work)}}).execute()
    nb.cells = nb.cells[1:]  # the picture shows one exercise and its check (the set-up cell ran first)
    nbformat.write(nb, work / "exercises.ipynb")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lab = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
                            "--ServerApp.token=", "--ServerApp.password=", "--allow-root", "--ServerApp.disable_check_xsrf=True",
                            f"--ServerApp.root_dir={work}"], stdout=subprocess.DEVNULL, stderr=open(work / "lab.log", "w"))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1350}, device_scale_factor=1)
            import urllib.request

            for _ in range(240):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2)
                    break
                except OSError:  # the server is starting
                    time.sleep(0.5)
            else:
                raise RuntimeError(f"jupyter lab did not start: {(work / 'lab.log').read_text()[-2000:]}")
            page.goto(f"http://127.0.0.1:{port}/lab/tree/exercises.ipynb?reset")
            try:
                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
                page.wait_for_selector(".jp-OutputArea-output", timeout=60_000)
            finally:
                time.sleep(3)
            news = page.get_by_role("button", name="No")
            if news.count():
                news.first.click()  # JupyterLab's question about its news
            page.locator(".jp-Cell").nth(2).scroll_into_view_if_needed()
            time.sleep(1)
            page.screenshot(path=str(out / "check-jupyterlab.png"))
            browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)


def main() -> int:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    terminal(out)
    jupyterlab(out, shutil.which("chromium") or "/usr/bin/chromium")
    return 0


if __name__ == "__main__":
    sys.exit(main())
