"""Every page runs on the CPU, the outputs the book shows were recorded from its current code, and the
notebooks the launch buttons open match their pages."""

import re

import pytest

from grader.authoring import derived
from tests.book.pages import (CODE_PAGES, PAGES, PAGES_WITHOUT_CODE, how_to_record, notebooks, record, recording_rules,
                              stored_record)

IDS = [p.stem for p in PAGES]
CODE_IDS = [p.stem for p in CODE_PAGES]
# Counted without the parser (jupytext), so that a parser that stops seeing cells cannot agree with itself.
CODE_FENCE = re.compile(r"^(`{3,}|~{3,})\{code-cell\}", re.M)


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_the_parser_finds_every_code_cell(page):
    fences = len(CODE_FENCE.findall(page.read_text()))
    cells = record.code_cells(record.read_markdown_notebook(page.read_text()))
    assert len(cells) == fences, f"{page.name}: the parser finds {len(cells)} code cells, the text has {fences}"
    if page.stem in PAGES_WITHOUT_CODE:
        assert not cells, f"{page.name} has code now: remove it from PAGES_WITHOUT_CODE in tests/book/pages.py"
    else:
        assert cells, f"{page.name} has no code cells (text-only pages are listed in PAGES_WITHOUT_CODE)"


# A sweep: every page was run whole when its outputs were recorded (test_recorded_outputs_match_the_code says
# the code has not changed since); this reruns each on the CPU with the torch installed here.
@pytest.mark.exhaustive
@pytest.mark.parametrize("page", CODE_PAGES, ids=CODE_IDS)
def test_page_runs_on_the_cpu(page):
    nb = record.read_markdown_notebook(page.read_text())
    cells = record.code_cells(nb)
    assert cells, f"{page.name}: no code cells found"
    record.execute(nb, timeout=120)  # as the recorder runs it: an error outside raises-exception cells fails
    silent = recording_rules.silent_raisers(cells)
    assert not silent, f"{page.name}: code cells {silent} are tagged raises-exception but raised nothing on the CPU"


@pytest.mark.parametrize("page", CODE_PAGES, ids=CODE_IDS)
def test_recorded_outputs_match_the_code(page):
    cells = record.code_cells(record.read_markdown_notebook(page.read_text()))
    assert cells, f"{page.name}: no code cells found"
    data = stored_record(page)
    recorded = {c["key"] for c in data["cells"]}
    keys = record.cell_keys([c.source for c in cells])
    stale = [i for i, key in enumerate(keys, start=1) if key not in recorded]
    assert not stale, (
        f"{page.name}: code cells {stale} (or a code cell before them) changed after the outputs were recorded "
        f"on {data.get('hardware', {}).get('date', 'an unknown date')}; {how_to_record(page)}"
    )


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_launch_notebook_matches_the_page(page):
    # Colab, Binder and JupyterHub open book/<page>.ipynb: it must say what the page says.
    assert not derived.launch_notebook_is_stale(page), \
        f"{notebooks.notebook_path(page).name} is missing or stale: run python book/_ext/notebooks.py"
