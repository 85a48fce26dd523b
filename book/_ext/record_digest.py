"""The digest that seals a page's recorded outputs.

record.py writes it into book/_recorded/<page>.json next to what it covers: the page name, the machine
description and every cell's key, execution count and outputs. tests/book/ recomputes it, so an output
edited by hand (or a machine description edited to look like a GPU run) no longer matches. It is a check
against accidents, not a signature: whoever edits a record on purpose can recompute it.
"""

from __future__ import annotations

import hashlib
import json

COVERED = ("page", "hardware", "cells")


def digest(record: dict) -> str:
    """sha256 of the covered fields, as canonical JSON (sorted keys, no whitespace), so that the value
    does not depend on how the file is indented."""
    covered = {k: record.get(k) for k in COVERED}
    text = json.dumps(covered, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
