"""Sphinx side of the recorded outputs: the page reader myst-nb uses for `.md` pages, and the
`recorded-hardware` directive of the status page. The store itself is output_store.py."""

from __future__ import annotations

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from output_store import STORE, load_pages, merge, read_markdown_notebook


def read_page(text: str) -> nbformat.NotebookNode:
    """myst-nb reader (nb_custom_formats) for `.md` pages: the page plus its recorded outputs."""
    return merge(read_markdown_notebook(text))


class RecordedHardware(SphinxDirective):
    """`recorded-hardware`: the table of which machine produced each page's outputs."""

    def run(self) -> list[nodes.Node]:
        for f in STORE.glob("*.json"):
            self.env.note_dependency(str(f))
        columns = ["Page", "GPUs", "Driver", "CUDA", "PyTorch", "Python", "Recorded"]
        table = nodes.table()
        group = nodes.tgroup(cols=len(columns))
        table += group
        group.extend(nodes.colspec(colwidth=1) for _ in columns)
        head = nodes.thead()
        head += _row(columns)
        body = nodes.tbody()
        for page in load_pages():
            hw = page["hardware"]
            body += _row([
                _doc_link(page["page"]),
                ", ".join(hw.get("gpus") or ["none (CPU only)"]),
                hw.get("driver") or "-",
                hw.get("cuda") or "-",
                hw["torch"],
                hw["python"],
                hw["date"],
            ])
        group += head
        group += body
        return [table]


def _doc_link(page: str) -> nodes.Node:
    """A link to a book page, titled as the page is."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/book/{page}", refexplicit=False)
    ref += nodes.inline(text=page)
    return ref


def _row(cells: list) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        para = nodes.paragraph()
        para += cell if isinstance(cell, nodes.Node) else nodes.Text(cell)
        entry += para
        row += entry
    return row


def setup(app):
    app.add_directive("recorded-hardware", RecordedHardware)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
