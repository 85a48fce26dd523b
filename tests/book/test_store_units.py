"""Unit tests of the book's output store (book/_ext/output_store.py, record_digest.py, recording_rules.py),
written to kill the mutants that test_records.py (checks of the records in the repository) lets through.
See benchmarks/results/mutation.md; tools/mutation/run.sh reruns the mutation run."""

from __future__ import annotations

import hashlib
import json

import nbformat

from tests.book.pages import record_digest, recording_rules  # noqa: F401 (puts book/_ext on sys.path)

import output_store  # noqa: E402  isort: skip


def test_cell_keys_chain_every_earlier_cell():
    keys = output_store.cell_keys(["a = 1", "  b = 2\n", "c"])
    h = hashlib.sha256(b"a = 1\0")
    assert keys[0] == h.hexdigest()[:16]
    h.update(b"b = 2\0")
    assert keys[1] == h.hexdigest()[:16] and len(keys) == 3 and all(len(k) == 16 for k in keys)
    assert output_store.cell_keys(["a = 1", "c"])[1] != keys[2]  # an earlier cell changed: a new key
    assert output_store.cell_keys(["a = 1\n\n"]) == keys[:1] and output_store.cell_keys([]) == []


def test_toc_pages_in_reading_order():
    import yaml

    toc = yaml.safe_load((output_store.ROOT / "_toc.yml").read_text())
    chapters = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    pages = output_store.toc_pages()
    assert pages == [output_store.ROOT / f"{f}.md" for f in [toc["root"], *chapters]]
    assert len(toc["parts"]) > 1 and all(p.exists() for p in pages)


def test_read_notebook_and_code_cells():
    nb = output_store.read_markdown_notebook("# Title\n\ntext\n\n```{code-cell} python\nx = 1\n```\n\nmore\n\n"
                                             "```{code-cell} python\nprint(x)\n```\n")
    cells = output_store.code_cells(nb)
    assert [c.source for c in cells] == ["x = 1", "print(x)"]


def test_merge_puts_recorded_outputs_in_their_cells(monkeypatch, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("t"), nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_code_cell("print(x)"), nbformat.v4.new_code_cell("unrecorded()")]
    k1, k2, k3 = output_store.cell_keys(["x = 1", "print(x)", "unrecorded()"])
    out = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    store = tmp_path / "_recorded"
    store.mkdir()
    (store / "page.json").write_text(json.dumps({"page": "page", "cells": [
        {"key": k1, "outputs": [], "execution_count": 1}, {"key": k2, "outputs": [out], "execution_count": 2}]}))
    monkeypatch.setattr(output_store, "STORE", store)
    output_store.load_records.cache_clear()
    try:
        records = output_store.load_records()
        assert records[k2] == {"key": k2, "outputs": [out], "execution_count": 2, "page": "page"}
        merged = output_store.merge(nb)
    finally:
        output_store.load_records.cache_clear()
    code = output_store.code_cells(merged)
    assert code[0].outputs == [] and code[0].execution_count == 1
    assert code[1].outputs == [out] and code[1].execution_count == 2
    assert code[2].outputs == [] and code[2].execution_count is None


def test_load_pages_follows_the_toc(monkeypatch, tmp_path):
    pages = output_store.toc_pages()
    monkeypatch.setattr(output_store, "STORE", tmp_path)
    for p in (pages[1], pages[0]):
        (tmp_path / f"{p.stem}.json").write_text(json.dumps({"page": p.stem, "cells": []}))
    assert [r["page"] for r in output_store.load_pages()] == [pages[0].stem, pages[1].stem]


def test_digest_covers_page_hardware_and_cells_only():
    rec = {"page": "p", "hardware": {"gpus": ["H100"]}, "cells": [{"key": "k", "outputs": []}], "other": 1}
    d = record_digest.digest(rec)
    text = json.dumps({"page": "p", "hardware": {"gpus": ["H100"]}, "cells": [{"key": "k", "outputs": []}]},
                      sort_keys=True, separators=(",", ":"))
    assert d == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert record_digest.digest({**rec, "other": 2}) == d
    assert record_digest.digest({**rec, "hardware": {"gpus": []}}) != d
    assert record_digest.digest({**rec, "page": "é"}) == "sha256:" + hashlib.sha256(
        text.replace('"page":"p"', '"page":"é"').encode()).hexdigest()


def test_gpu_rules():
    assert recording_rules.gpus_needed("multi-gpu") == 2 and recording_rules.gpus_needed("tensors") == 1
    assert recording_rules.gpu_shortfall("tensors", {"gpus": ["a"]}) is None
    assert recording_rules.gpu_shortfall("multi-gpu", {"gpus": ["a", "b", "c"]}) is None
    assert recording_rules.gpu_shortfall("multi-gpu", {"gpus": ["a"]}) == (
        "multi-gpu must be recorded with at least 2 GPU(s); this machine shows 1")
    assert recording_rules.gpu_shortfall("tensors", {"gpus": None}).endswith("at least 1 GPU(s); this machine shows 0")
    assert recording_rules.gpu_shortfall("tensors", {}) is not None


def test_silent_raisers():
    err = {"output_type": "error", "traceback": ["Traceback..."]}
    tagged = {"metadata": {"tags": ["raises-exception"]}}
    cells = [{**tagged, "outputs": [err]}, {**tagged, "outputs": [{"output_type": "stream"}]},
             {"metadata": {}, "outputs": []}, {**tagged, "outputs": [{"output_type": "error", "traceback": []}]},
             {**tagged}]
    assert recording_rules.silent_raisers(cells) == [2, 4, 5]
    assert recording_rules.raises_tagged(tagged) and not recording_rules.raises_tagged({})
    assert recording_rules.has_traceback([{"output_type": "stream"}, err])
    assert not recording_rules.has_traceback([{"output_type": "stream", "traceback": ["x"]}])
