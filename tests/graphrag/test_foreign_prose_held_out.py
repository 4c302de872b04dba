"""The held-out foreign-prose set: its bytes are the ones frozen before the extractor work it
measures, it loads as the development set does, and docs/graphrag.md shows what the code measures."""

from __future__ import annotations

import hashlib
from pathlib import Path

from suites.graphrag.foreign import HELD_OUT, HELD_OUT_SHA256, foreign_prose_scores, load_paragraphs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "graphrag.md"
PROVENANCE = HELD_OUT.with_suffix(".md")


def test_the_held_out_set_is_the_one_frozen_before_the_extractor_work():
    assert hashlib.sha256(HELD_OUT.read_bytes()).hexdigest() == HELD_OUT_SHA256
    assert HELD_OUT_SHA256 in PROVENANCE.read_text(encoding="utf-8")  # committed before the file (24d3baa)
    paragraphs = load_paragraphs(HELD_OUT)
    kinds = [p.kind for p in paragraphs]
    assert kinds.count("world") == 102 and kinds.count("real") == 100
    assert {p.world for p in paragraphs if p.kind == "world"} == {880001, 880002, 880003}


def test_a_changed_byte_is_refused(tmp_path, monkeypatch):
    import pytest

    import suites.graphrag.foreign as foreign

    copy = tmp_path / "foreign_prose_2.jsonl"
    copy.write_bytes(HELD_OUT.read_bytes().replace(b"born", b"borm", 1))
    monkeypatch.setitem(foreign.SETS, "held-out", (copy, HELD_OUT_SHA256))
    with pytest.raises(ValueError, match="sha256 differs"):
        load_paragraphs(copy)


def test_docs_show_the_held_out_figures():
    scores = foreign_prose_scores(load_paragraphs(HELD_OUT))
    text = DOCS.read_text(encoding="utf-8")
    for kind, row in scores.items():
        p, r = row["precision"], row["recall"]
        line = (f"| held-out {kind} | {row['paragraphs']} | {row['gold']} | {row['extracted']} | "
                f"{p.estimate:.2f} [{p.low:.2f}, {p.high:.2f}] | {r.estimate:.2f} [{r.low:.2f}, {r.high:.2f}] |")
        assert line in text, f"docs/graphrag.md lacks the measured row: {line}"
