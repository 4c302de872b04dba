"""The spaCy extractor reads a real graph's relations by their own identifiers and links names to
the corpus's page titles (invented pages in the shapes a graph's own pages take)."""

from __future__ import annotations

from environments.graphrag.corpus import Document
from environments.graphrag.nlp_named import name_words

GRAPH = ["borders", "location_of", "term7"]


def _read(spacy_extract, pages: list[tuple[str, list[str]]], relations=GRAPH) -> set[tuple[str, str, str, bool]]:
    from environments.graphrag.extractors import make_extractor

    extract = make_extractor("spacy", relations)
    docs = [Document(f"p{k}", title, lines) for k, (title, lines) in enumerate(pages)]
    return {(s.head, s.relation, s.tail, s.negated) for s in extract(docs)}


def test_an_identifier_is_split_as_the_tokenizer_splits_text():
    assert name_words("co-occurs_with") == ("co", "-", "occurs", "with")
    assert name_words("term7") == ("term7",)


def test_a_relation_is_read_by_its_own_name_in_either_direction(spacy_extract):
    got = _read(spacy_extract, [
        ("Veldmark", ["Veldmark borders Osterland and Rivania.",
                      "Through borders, it is connected to Kalvo.",
                      "Nordheim is the borders counterpart of Veldmark.",
                      "It is reached from Sunport through borders."]),
        ("Osterland", ["Osterland lies east."]), ("Rivania", ["Rivania is small."]), ("Kalvo", ["Kalvo is old."]),
        ("Nordheim", ["Nordheim is cold."]), ("Sunport", ["Sunport is warm."])])
    assert {("Veldmark", "borders", t, False) for t in ("Osterland", "Rivania", "Kalvo", "Nordheim")} <= got
    assert ("Sunport", "borders", "Veldmark", False) in got
    assert not any(h == "Nordheim" or t == "Sunport" for h, _, t, _ in got)


def test_coordinated_clauses_keep_their_own_objects(spacy_extract):
    got = _read(spacy_extract, [("Person3", ["Person3 term7 Person4 and borders Person5.",
                                              "It relates to Person6 via term7 and has a borders link to Person8."]),
                                *[(f"Person{n}", [f"Person{n} is here."]) for n in (4, 5, 6, 8)]])
    assert got == {("Person3", "term7", "Person4", False), ("Person3", "borders", "Person5", False),
                   ("Person3", "term7", "Person6", False), ("Person3", "borders", "Person8", False)}


def test_page_titles_link_lower_case_names_and_reported_clauses_state_nothing(spacy_extract):
    got = _read(spacy_extract, [
        ("body_region", ["Body region location of Acquired lesion and Nerve cell group.",
                         "It is unclear whether Body region location of Kidney stone."]),
        ("acquired_lesion", ["Acquired lesion is a finding."]), ("nerve_cell_group", ["Nerve cell group is tissue."]),
        ("kidney_stone", ["Kidney stone is a finding."])])
    assert got == {("body_region", "location_of", "acquired_lesion", False),
                   ("body_region", "location_of", "nerve_cell_group", False)}


def test_a_title_inside_a_longer_name_and_a_question_title_are_no_names(spacy_extract):
    from tests.graphrag.spacy_reading import triples

    got = triples(spacy_extract, "Siemens AG is headquartered in Munich.", title="Siemens")
    assert ("Siemens AG", "headquartered_in", "Munich", False) in got
    got = triples(spacy_extract, "What is Brask Labs?\nBrask Labs is based in Oslo.", title="What is Brask Labs?")
    assert not any("?" in h for h, _, _, _ in got)
