"""The spaCy extractor on small invented texts: line structure, coordination, negation,
appositions, pronouns; the one interface; a missing pipeline names what to install."""

from __future__ import annotations

import pytest

from agentbed.testing import require
from environments.graphrag.extractors import EXTRACTORS, make_extractor
from tests.graphrag.spacy_reading import RELATIONS, triples

# foreign_harvests (spaCy's reading of every foreign-prose set, about 50 s) serves test_nlp_extract
# and test_nlp_pairs: both go to one xdist worker, one after the other, so it is built once
# (tests/conftest.py); on two workers each built it (51.9 s and 50.5 s of setup in one CI run)
pytestmark = pytest.mark.one_worker("foreign-harvests")


def test_coordinated_subjects_each_get_the_fact(spacy_extract):
    got = triples(spacy_extract, "Geneva, Lausanne and Neuchâtel are cities in Switzerland.")
    assert {(c, "located_in", "Switzerland", False) for c in ("Geneva", "Lausanne", "Neuchâtel")} <= got


def test_apposition_with_founders_and_a_based_prefix(spacy_extract):
    got = triples(spacy_extract, "Nokia, the Espoo-based group founded by Fredrik Idestam and Leo Mechelin, "
                                 "makes phones.")
    assert {("Nokia", "founded_by", "Fredrik Idestam", False), ("Nokia", "founded_by", "Leo Mechelin", False),
            ("Nokia", "headquartered_in", "Espoo", False)} <= got
    assert not any(h == "Fredrik Idestam" and r == "founded_by" for h, r, _, _ in got)


def test_negation_and_pronouns(spacy_extract):
    got = triples(spacy_extract, "Ana Silva was born in Lisbon, not Porto. She now works for Galp Energia.")
    assert ("Ana Silva", "born_in", "Lisbon", False) in got and ("Ana Silva", "works_for", "Galp Energia", False) in got
    assert not any(t == "Porto" and not n for _, _, t, n in got)
    assert triples(spacy_extract, "Tom Hale no longer works for Brask Labs.") == {
        ("Tom Hale", "works_for", "Brask Labs", True)}


def test_line_structure_is_kept(spacy_extract):
    text = "Headquarters: Espoo, Finland\n* Founded by Jane Roe\nOffices: Oslo; Riga"
    got = triples(spacy_extract, text, title="Acme Corp")
    assert ("Acme Corp", "headquartered_in", "Espoo", False) in got
    assert ("Acme Corp", "founded_by", "Jane Roe", False) in got
    assert not any("Founded" in h or "Founded" in t for h, _, t, _ in got)
    assert {("Acme Corp", "office_in", "Oslo", False), ("Acme Corp", "office_in", "Riga", False)} <= got


def test_a_field_sheet_names_its_topic_and_a_multiword_name_stays_whole(spacy_extract):
    got = triples(spacy_extract, "Mirka Iraira — curriculum vitae\nBorn: Tiszel\nCitizenship: Pelnovnov\n"
                                 "Education: University of Danpelul")
    assert {("Mirka Iraira", "born_in", "Tiszel", False), ("Mirka Iraira", "citizen_of", "Pelnovnov", False),
            ("Mirka Iraira", "studied_at", "University of Danpelul", False)} <= got
    got = triples(spacy_extract, "Hans Weber lives in Frankfurt am Main.")
    assert ("Hans Weber", "lives_in", "Frankfurt am Main", False) in got


def test_one_interface_names_its_extractors():
    assert EXTRACTORS == ("rules", "spacy", "llm", "spacy-rules")
    with pytest.raises(ValueError, match="--model"):
        make_extractor("llm", RELATIONS)
    with pytest.raises(ValueError, match="not one of rules, spacy, llm"):
        make_extractor("bert", RELATIONS)


def test_a_missing_pipeline_names_what_to_install(monkeypatch):
    import environments.graphrag.nlp_extract as nlp

    monkeypatch.setattr(nlp, "PIPELINE", "no_such_pipeline_module")
    nlp.load_pipeline.cache_clear()
    try:
        assert not nlp.pipeline_available()
        with pytest.raises(RuntimeError, match="scripts/setup-spacy-model"):
            make_extractor("spacy", RELATIONS)
        monkeypatch.setenv("CI", "true")
        with pytest.raises(pytest.fail.Exception, match="CI=true and .*scripts/setup-spacy-model"):
            require(nlp.pipeline_available(), "the spaCy English pipeline", nlp.INSTALL)
    finally:
        nlp.load_pipeline.cache_clear()


def test_the_cli_reads_a_file_with_the_chosen_extractor(spacy_extract, tmp_path, capsys):
    from agentbed.cli import main

    f = tmp_path / "notes.txt"
    f.write_text("Acme Corp\nHeadquarters: Espoo, Finland\n* Founded by Jane Roe\n", encoding="utf-8")
    assert main(["graphrag", "extract", str(f), "--extractor", "spacy", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"Jane Roe"' in out and "Finland Founded" not in out
    assert main(["graphrag", "extract", "--docs", "2", "--extractor", "spacy"]) == 0
    assert "spacy: precision" in capsys.readouterr().out


def test_the_suite_builds_its_index_with_the_chosen_extractor(spacy_extract):
    """The suite's path: a generated world's corpus (sentences are Line objects) indexed by the
    spaCy extractor through the suite's option; most of what it indexes is what the writer said."""
    from environments.graphrag.corpus import gold_statements
    from suites.graphrag.scenarios import graphrag_suite, load_dataset, poisoned

    assert graphrag_suite().options["extractor"].choices == ("rules", "spacy", "llm", "spacy-rules")
    built = poisoned("world", 1000, "none", 5, 12, "louvain", "tdp", "targeted", "spacy")
    facts = {(s.head, s.relation, s.tail) for s in built.index.kg.statements}
    gold = {(s.head, s.relation, s.tail) for s in gold_statements(load_dataset("world", 1000).documents)}
    assert len(facts) > 100 and len(facts & gold) / len(facts) > 0.7


def test_docs_show_the_current_figures_the_code_measures(foreign_harvests):
    """docs/graphrag-extraction.md's current spaCy table is what ``python -m suites.graphrag.styles
    --set set-N --extractor spacy --markdown`` prints, for every foreign-prose set. (The spaCy rows
    of set 3's and set 4's one held-out measurement are records of the extractor of a621f3b, set
    5's of 15ba13d, set 6's of 6485b5d, set 7's of 2f1f292, set 8's of 4f338d5, set 9's of aa82f4b, set 10's of cf6364e. Sets 14-19 are read apart: the weights were trained on sets 1-13.)"""
    from pathlib import Path

    from suites.graphrag.foreign import SETS, load_paragraphs
    from suites.graphrag.styles import markdown_rows, style_scores

    text = (Path(__file__).resolve().parents[2] / "docs" / "graphrag-extraction.md").read_text(encoding="utf-8")
    table = text[text.index("| set, rows (paragraphs, gold) | spaCy precision"):].split("\n\n")[0].splitlines()[2:]
    measured = [line for name in ("set-1", "set-2", "set-3", "set-4", "set-5", "set-6", "set-7", "set-8", "set-9",
                                      "set-10", "set-11", "set-12", "set-13", "set-14", "set-15",
                                      "set-16", "set-17", "set-18", "set-19")
                for line in markdown_rows(name, style_scores(
                    load_paragraphs(SETS[name][0]), "spacy",
                    read=(foreign_harvests[name].got, foreign_harvests[name].gold) if name in foreign_harvests else None))]
    assert table == measured
