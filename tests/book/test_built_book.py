"""The built book (the session's `jupyter-book build`, tests/book/conftest.py) shows what its sources and
recorded outputs hold: a print split over two recorded stream outputs stays one line, and the doctor's
quotes on "On your own code" show the code they introduce (issue 41)."""

import html
import re

import nbformat
from myst_nb.core.utils import coalesce_streams

from tests.book.pages import record  # noqa: F401 (puts book/_ext on sys.path)

import output_store  # noqa: E402  isort: skip


def text_of(built_book, page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", (built_book / "book" / f"{page}.html").read_text()))


def test_a_print_split_over_two_stream_outputs_is_one_line(built_book):
    shown = text_of(built_book, "moving-tensors")
    assert re.search(r"^b: tensor\(\[1\., 1\., 1\.\]", shown, re.M), "b: is on a line of its own"
    assert not re.search(r"^b:\s*$", shown, re.M)


def test_the_doctors_quotes_show_the_rewrite_they_introduce(built_book):
    for page in ("tensors-and-devices", "mps-and-accelerators"):
        shown = text_of(built_book, page)
        note = shown[shown.index("On your own code"):]
        assert "Choose the device once, for every accelerator:\n        device = torch.accelerator" in note, page


def test_stream_outputs_are_joined_as_written_before_myst_nb_merges_them():
    # myst-nb's nb_merge_streams ends each part with a newline; joined first, its merge has one part to end.
    parts = [{"output_type": "stream", "name": "stdout", "text": "a: 0\nb: "},
             {"output_type": "stream", "name": "stdout", "text": "1 cpu\n"},
             {"output_type": "stream", "name": "stderr", "text": "warned\n"},
             {"output_type": "stream", "name": "stdout", "text": "after\n"}]
    joined = output_store.joined_streams(parts)
    assert [o["text"] for o in joined] == ["a: 0\nb: 1 cpu\n", "warned\n", "after\n"]
    merged = coalesce_streams([nbformat.from_dict(o) for o in joined])
    assert merged[0]["text"] == "a: 0\nb: 1 cpu\nafter\n"
    assert coalesce_streams([nbformat.from_dict(o) for o in parts[:2]])[0]["text"] == "a: 0\nb:\n1 cpu\n"  # unjoined
