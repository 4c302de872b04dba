"""Name boundaries in the spaCy extractor's names (:func:`environments.graphrag.nlp_names.entities`),
session 19: an end swallowed by a longer span or renamed by an alias, or cut at a bracket, is one of the
two largest causes of gold facts with no candidate pair (docs/graphrag-extraction.md)."""

from __future__ import annotations

from environments.graphrag.nlp_names import State, entities


def _names(spacy_extract, *lines: str) -> list[list[str]]:
    from environments.graphrag.nlp_extract import load_pipeline

    nlp, state = load_pipeline(), State()
    return [[e.name for e in entities(nlp(line), state)] for line in lines]


def test_two_of_spacys_names_around_of_stay_two_and_a_schools_name_stays_one(spacy_extract):
    got = _names(spacy_extract, "The firm began in the Nile Delta of Egypt.",
                 "Boulevard Brewing Company of Kansas City was sold.",
                 "She studied at the University of Vienna.", "The Bank of Georgia is in Tbilisi.")
    assert got == [["Nile Delta", "Egypt"], ["Boulevard Brewing Company", "Kansas City"],
                   ["University of Vienna"], ["Bank of Georgia", "Tbilisi"]]


def test_a_title_before_a_person_is_no_part_of_the_name(spacy_extract):
    got = _names(spacy_extract, "Prime Minister Kyriakos Mitsotakis spoke.",
                 "Coach José Luis Mendilibar joined Olympiacos.")
    assert got[0] == ["Kyriakos Mitsotakis"] and got[1][0] == "José Luis Mendilibar"


def test_a_bracket_inside_spacys_name_ends_it(spacy_extract):
    got = _names(spacy_extract, "The Turkish Petroleum Industry Association (PETDER) was founded in Istanbul.")
    assert got == [["Turkish Petroleum Industry Association", "PETDER", "Istanbul"]]


def test_a_place_is_not_renamed_to_an_organisation_that_holds_its_name(spacy_extract):
    got = _names(spacy_extract, "She studied at Kyoto University.", "The university is in Kyoto.")
    assert got == [["Kyoto University"], ["Kyoto"]]
