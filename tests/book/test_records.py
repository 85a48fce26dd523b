"""The recorded outputs in book/_recorded/ are what the recorder wrote, on the hardware the page needs.

Comparing keys (test_pages.py) only proves that a record belongs to the current code. These tests also
catch a record edited by hand (its digest no longer matches), a page recorded on a machine without the
GPUs it needs (its CPU fallbacks would be published as GPU results), a raises-exception cell whose
recorded output shows no traceback, and prose that quotes a glued value the record does not hold.
"""

import re

import pytest

from tests.book.pages import CODE_PAGES, current_records, how_to_record, record_digest, recording_rules, stored_record

IDS = [p.stem for p in CODE_PAGES]
MACHINE_FIELDS = ("gpus", "driver", "torch", "date")
GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)")


@pytest.mark.parametrize("page", CODE_PAGES, ids=IDS)
def test_outputs_match_their_digest(page):
    data = stored_record(page)
    if "digest" not in data:
        pytest.fail(f"{page.name}: the record has no digest (written before digests existed); {how_to_record(page)}")
    if record_digest.digest(data) != data["digest"]:
        pytest.fail(f"book/_recorded/{page.stem}.json differs from what the recorder wrote (edited by hand?); "
                    f"{how_to_record(page)}")


@pytest.mark.parametrize("page", CODE_PAGES, ids=IDS)
def test_recorded_on_the_hardware_the_page_needs(page):
    hardware = stored_record(page).get("hardware") or {}
    missing = [f for f in MACHINE_FIELDS if not hardware.get(f)]
    assert not missing, f"{page.name}: the record does not say its machine's {missing}; {how_to_record(page)}"
    short = recording_rules.gpu_shortfall(page.stem, hardware)
    assert short is None, f"{short}: {how_to_record(page)}"


@pytest.mark.parametrize("page", CODE_PAGES, ids=IDS)
def test_raises_exception_cells_recorded_a_traceback(page):
    silent = [i for i, (cell, rec) in enumerate(current_records(page), start=1)
              if rec is not None and recording_rules.raises_tagged(cell)
              and not recording_rules.has_traceback(rec["outputs"])]
    assert not silent, f"{page.name}: code cells {silent} are tagged raises-exception, but their records show no error"


@pytest.mark.parametrize("page", CODE_PAGES, ids=IDS)
def test_quoted_values_are_recorded(page):
    # The build would fail too ({glue:text} of a missing key is a warning, -W), but later and less clearly.
    quoted = set(GLUE_ROLE.findall(page.read_text()))
    glued = {o["metadata"]["scrapbook"]["name"]
             for _, rec in current_records(page) if rec is not None
             for o in rec["outputs"] if "scrapbook" in o.get("metadata", {})}
    if not quoted <= glued:
        pytest.fail(f"{page.name}: the text quotes {sorted(quoted - glued)}, which no current record glued; "
                    f"{how_to_record(page)}")
