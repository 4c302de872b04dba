"""The extractor on the frozen foreign-prose set: the set is unchanged, the scorer is fair, and
docs/graphrag-extraction.md shows the figures this code measures."""

from __future__ import annotations

import hashlib
from pathlib import Path

from environments.graphrag.corpus import Statement
from suites.graphrag.foreign import (
    DATA,
    SHA256,
    Paragraph,
    extract_paragraphs,
    foreign_prose_scores,
    load_paragraphs,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "graphrag-extraction-history.md"


def test_the_set_is_the_frozen_one():
    assert hashlib.sha256(DATA.read_bytes()).hexdigest() == SHA256
    paragraphs = load_paragraphs()
    kinds = [p.kind for p in paragraphs]
    assert len(paragraphs) >= 150 and kinds.count("world") == 102 and kinds.count("real") == 88
    assert {p.world for p in paragraphs if p.kind == "world"} == {770001, 770002, 770003}


def test_the_scorer_counts_a_symmetric_relation_either_way_and_ignores_case():
    p = Paragraph("w770001-0", "world", "Ana Lodan is a colleague of Bo Kel.", (("bo kel", "colleague_of", "Ana Lodan"),))
    got, gold = extract_paragraphs([p])
    assert gold == [Statement("ana lodan", "colleague_of", "bo kel", "w770001-0", "")]
    assert got == gold


AFTER = "*After the rule changes (development set, tuned on it: not a held-out figure)*"
NOW = "*Type checks and rules for untitled paragraphs (development figures: tuned on both sets)*"
FIRST = ("| world | 102 | 432 | 331 | 0.71 [0.63, 0.78] | 0.54 [0.48, 0.61] |",
         "| real | 88 | 297 | 277 | 0.47 [0.40, 0.53] | 0.43 [0.37, 0.50] |",
         "| all | 190 | 729 | 608 | 0.60 [0.54, 0.65] | 0.50 [0.45, 0.55] |")
# Measured by the extractor of e6e81f9 (unchanged through 47a68b8), before the type checks.
AFTER_ROWS = ("| world | 102 | 432 | 404 | 0.96 [0.93, 0.99] | 0.90 [0.85, 0.94] |",
              "| real | 88 | 297 | 294 | 0.77 [0.69, 0.83] | 0.76 [0.69, 0.83] |",
              "| all | 190 | 729 | 698 | 0.88 [0.84, 0.91] | 0.84 [0.80, 0.88] |")


def measured_rows(label: str, scores: dict) -> list[str]:
    """The docs' table rows for a set's scores, e.g. "| set 1 world | 102 | ... |"."""
    rows = []
    for kind, row in scores.items():
        p, r = row["precision"], row["recall"]
        rows.append(f"| {label}{kind} | {row['paragraphs']} | {row['gold']} | {row['extracted']} | "
                    f"{p.estimate:.2f} [{p.low:.2f}, {p.high:.2f}] | {r.estimate:.2f} [{r.low:.2f}, {r.high:.2f}] |")
    return rows


def current_section() -> str:
    """The docs' section of the current development figures (up to the next heading)."""
    text = DOCS.read_text(encoding="utf-8")
    assert NOW in text
    return text.split(NOW, 1)[1].split("\n#", 1)[0]


def test_docs_show_the_measured_figures():
    """The current table holds what the code measures on set 1; the first measurement's rows and
    those after the first rule changes stay above it as history."""
    text = DOCS.read_text(encoding="utf-8")
    assert AFTER in text and NOW in text
    before, after = text.split(AFTER, 1)
    for line in FIRST:
        assert line in before, f"docs/graphrag-extraction.md lost the first measurement's row: {line}"
    for line in AFTER_ROWS:
        assert line in after.split(NOW, 1)[0], f"docs/graphrag-extraction.md lost the earlier development row: {line}"
    for line in measured_rows("set 1 ", foreign_prose_scores()):
        assert line in current_section(), f"docs/graphrag-extraction.md lacks the measured row: {line}"


def test_the_declared_sample_is_stratified_and_fixed():
    from suites.graphrag.foreign import load_paragraphs, sample

    paragraphs = load_paragraphs()
    chosen = sample(paragraphs, 10)
    assert [p.kind for p in chosen].count("world") == 11 and [p.kind for p in chosen].count("real") == 9
    assert chosen == sample(load_paragraphs(), 10)  # a function of the frozen file alone
