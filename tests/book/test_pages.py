"""Every page runs on the CPU, the outputs the book shows were recorded from its current code, and the\nnotebooks the launch buttons open match their pages."""

import json

import jupytext
import pytest

from tests.book.pages import PAGES, notebooks, record

IDS = [p.stem for p in PAGES]


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_runs_on_the_cpu(page):
    nb = record.read_markdown_notebook(page.read_text())
    if not record.code_cells(nb):
        pytest.skip("no code")
    record.execute(nb, timeout=120)  # as the recorder runs it: an error outside raises-exception cells fails


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_recorded_outputs_match_the_code(page):
    cells = record.code_cells(record.read_markdown_notebook(page.read_text()))
    if not cells:
        pytest.skip("no code")
    stored = record.STORE / f"{page.stem}.json"
    assert stored.exists(), f"{page.name} has no recorded outputs: run python book/_ext/record.py {page.relative_to(record.ROOT)}"
    data = json.loads(stored.read_text())
    recorded = {c["key"] for c in data["cells"]}
    keys = record.cell_keys([c.source for c in cells])
    stale = [i for i, key in enumerate(keys, start=1) if key not in recorded]
    assert not stale, (
        f"{page.name}: code cells {stale} (or a code cell before them) changed after the outputs were recorded "
        f"on {data['hardware']['date']}; record the page again on a GPU machine"
    )


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_launch_notebook_matches_the_page(page):
    # Colab, Binder and JupyterHub open book/<page>.ipynb: it must say what the page says.
    path = notebooks.notebook_path(page)
    assert path.exists(), f"{path.name} is missing: run python book/_ext/notebooks.py"
    expected = notebooks.cells(record.read_markdown_notebook(page.read_text()))
    assert notebooks.cells(jupytext.read(path)) == expected, f"{path.name} is stale: run python book/_ext/notebooks.py"
