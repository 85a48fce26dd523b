"""The book's pages, and the recorder's helpers, for the book tests."""

import sys

from grader import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import notebooks  # noqa: E402, F401  (the tests use it through this module)
import record  # noqa: E402

PAGES = record.toc_pages()
