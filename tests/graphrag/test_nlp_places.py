"""Places within places, an organisation's sites, a fact sheet's listed values and a person's
role, read by the spaCy extractor (environments/graphrag/nlp_places.py, nlp_roles.py, the office
cues of nlp_lines.SPACY_CUES), on invented sentences: one per error class of set 5's development
reading, and what each class must not read (lists, people, "a leader in", a former role); and
"she" when no person was a subject: the last person named, not the document's topic."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from environments.graphrag.nlp_places import _place_noun_gap
from tests.graphrag.spacy_reading import triples


@pytest.mark.parametrize(("text", "want"), [
    ("The old observatory stands on a hill in Quito, Ecuador.", ("Quito", "Ecuador")),  # a qualifier, no cue
    ("She was born in Kumasi in Ghana and moved away at ten.", ("Kumasi", "Ghana")),  # "X in Y"
    ("The mill stands in Leeds, in the county of Yorkshire.", ("Leeds", "Yorkshire")),
    ("We stayed in Tamale, a city in Ghana.", ("Tamale", "Ghana")),
    ("We spent a morning at the Ashmolean Museum in central Oxford.", ("Ashmolean Museum", "Oxford")),  # a landmark
    ("Walk through Phoenix Park in western Dublin.", ("Phoenix Park", "Dublin")),  # spaCy: a PERSON-tagged park
])
def test_a_place_within_a_place_anywhere_in_a_line(spacy_extract, text, want):
    assert (want[0], "located_in", want[1], False) in triples(spacy_extract, text)


@pytest.mark.parametrize("text", [
    "The band toured Lima, Quito and Bogotá last spring.",  # a list, no place within another
    "Our offices: Lima, Quito, Bogotá",  # a plural label's value is a list
    "Ann Lee, London, wrote to the paper.",  # a person's place is no place within a place
])
def test_a_list_of_places_is_not_a_place_within_another(spacy_extract, text):
    got = triples(spacy_extract, text)
    assert not any(r == "located_in" and {h, t} <= {"Lima", "Quito", "Bogotá", "Ann Lee", "London"}
                   for h, r, t, _ in got)


def test_an_organisation_described_by_a_noun_in_a_place_is_based_there(spacy_extract):
    got = triples(spacy_extract, "The Nairobi Institute of Technology is a public university in Kisumu.")
    assert ("Nairobi Institute of Technology", "headquartered_in", "Kisumu", False) in got
    assert not any(r == "headquartered_in" for _, r, _, _ in
                   triples(spacy_extract, "Siemens is a leader in robotics."))


def test_a_site_noun_names_an_office_and_a_main_site_the_headquarters(spacy_extract):
    got = triples(spacy_extract, "Embraco runs a large factory in Joinville and a research centre in Turin.")
    assert {("Embraco", "office_in", "Joinville", False), ("Embraco", "office_in", "Turin", False)} <= got
    got = triples(spacy_extract, "Halden Polytechnic has its main campus in Oslo and a campus in Bergen.")
    assert {("Halden Polytechnic", "headquartered_in", "Oslo", False),
            ("Halden Polytechnic", "office_in", "Bergen", False)} <= got


def test_a_plural_label_lists_its_values_and_a_known_name_before_it_owns_them(spacy_extract):
    got = triples(spacy_extract, "Company: Brask Labs\nFormed: 2001, when Kelro Bakeries and Brask Labs merged\n"
                                 "Founders: Ann Orvel, Tom Vasquez, Lena Fischer\nMajor offices: Lima, Quito, Cusco\n"
                                 "Kelro Bakeries founders: Maria Lopez, John Stewart")
    assert {("Brask Labs", "founded_by", p, False) for p in ("Ann Orvel", "Tom Vasquez", "Lena Fischer")} <= got
    assert {("Brask Labs", "office_in", c, False) for c in ("Lima", "Quito", "Cusco")} <= got
    assert {("Kelro Bakeries", "founded_by", p, False) for p in ("Maria Lopez", "John Stewart")} <= got
    assert not any(r == "located_in" for _, r, _, _ in got)


def test_a_role_without_of_works_for_the_organisation(spacy_extract):
    got = triples(spacy_extract, "Brask Labs makes bread in Lima.\nChief executive Ann Orvel said sales grew.\n"
                                 "Tom Vasquez, the chief scientist, agreed.")
    assert {("Ann Orvel", "works_for", "Brask Labs", False), ("Tom Vasquez", "works_for", "Brask Labs", False)} <= got
    got = triples(spacy_extract, "Brask Labs makes bread in Lima.\nAnn Orvel was its president until 2001.")
    assert not any(r == "works_for" for _, r, _, _ in got)


def test_she_is_the_last_person_named_when_no_person_was_a_subject(spacy_extract):
    got = triples(spacy_extract, "Q: Who started the Kelro Reading Club?\nA: The teacher Ann Orvel, in 1977. "
                                 "The club is still based in Nairobi.\nQ: Where was she born?\nA: In Mombasa.")
    assert ("Ann Orvel", "born_in", "Mombasa", False) in got
    assert not any(h == "Kelro Reading Club" and r == "born_in" for h, r, _, _ in got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([",", "in", "the", "a", "district", "of", "suburb", "city", "south", "and",
                                 "near", "old"]), max_size=7))
def test_a_place_noun_gap_ends_in_a_place_noun_and_of_or_in(gap):
    if _place_noun_gap(gap):
        words = [w for w in gap if w not in (",", "the", "a")]
        assert words[-1] in ("of", "in") and gap.count(",") <= 1 and "and" not in gap and len(gap) <= 7
        assert any(w in ("district", "suburb", "city") for w in words)


def test_a_comma_chain_of_places_nests_and_a_list_does_not(spacy_extract):
    """A place field's value "A, B, C" is A in B in C, whatever the tagger calls A; a plural label
    or an "and" after the chain makes it a list."""
    got = triples(spacy_extract, "Born: Kapsisiywa, Nandi County, Kenya", title="Jane Roe")
    assert {("Kapsisiywa", "located_in", "Nandi County", False), ("Nandi County", "located_in", "Kenya", False)} <= got
    got = triples(spacy_extract, "* Major offices: Melbourne, London, Denver", title="Acme Corp")
    assert not any(r == "located_in" for _, r, _, _ in got)
    got = triples(spacy_extract, "Acme has offices in Oslo, Riga, and Tallinn.")
    assert not any(r == "located_in" for _, r, _, _ in got)
