"""Sphinx side of the recorded outputs: the page reader myst-nb uses for `.md` pages, and the
`recorded-hardware` directive of the status page. The store itself is output_store.py.

Values that code cells glued (myst-nb's glue format: display_data outputs whose metadata names them) are
merged with their metadata like any other output, so the {glue:text} roles in the prose find them."""

from __future__ import annotations

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from output_store import STORE, load_pages, merge, read_markdown_notebook
from record_digest import digest


def read_page(text: str) -> nbformat.NotebookNode:
    """myst-nb reader (nb_custom_formats) for `.md` pages: the page plus its recorded outputs."""
    return merge(read_markdown_notebook(text))


class RecordedHardware(SphinxDirective):
    """`recorded-hardware`: the table of which machine produced each page's outputs."""

    def run(self) -> list[nodes.Node]:
        for f in STORE.glob("*.json"):
            self.env.note_dependency(str(f))
        columns = ["Page", "GPUs", "Driver", "CUDA", "PyTorch", "Python", "Recorded", "Outputs"]
        table = nodes.table()
        group = nodes.tgroup(cols=len(columns))
        table += group
        group.extend(nodes.colspec(colwidth=1) for _ in columns)
        head = nodes.thead()
        head += _row(columns)
        body = nodes.tbody()
        for page in load_pages():
            body += _row([_doc_link(page["page"]), *machine_columns(page)])
        group += head
        group += body
        return [table]


def machine_columns(record: dict) -> list[str]:
    """The status table's cells for one page's record (output_store.py), from GPUs to Outputs. Records
    written before a field existed show "not recorded" rather than breaking the build."""
    hw = record.get("hardware") or {}
    gpus = hw.get("gpus")
    if gpus is None:
        gpu_text = "not recorded"
    elif not gpus:
        gpu_text = "none (CPU only)"
    else:
        gpu_text = ", ".join(f"{gpus.count(name)} × {name}" for name in dict.fromkeys(gpus))
    if "digest" not in record:
        sealed = "no digest"
    elif digest(record) == record["digest"]:
        sealed = "as recorded"
    else:
        sealed = "changed after recording"
    return [gpu_text, hw.get("driver") or "-", hw.get("cuda") or "-",
            *(hw.get(f) or "not recorded" for f in ("torch", "python", "date")), sealed]


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
