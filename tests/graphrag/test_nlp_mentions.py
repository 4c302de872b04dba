"""Error classes of the spaCy extractor on other writers' prose (issue 50), each on invented text,
each failing on the extractor before it was fixed (main 0a1e2ec): a definite description refers
back to the name it described ("the orchestra"); a subject noun with an apposed name is that name
("Its chief executive, X, was born in ..."); a role held through an owner phrase ("X, the group's
president", "its director, X,", "whose chief executive is X", "X has been chief executive since
..."); a facility noun places a site ("runs data centres in A and B"); a dateline's place in
capitals of any script, or cut at a month's abbreviation, and its "CITY, Region" as a place in a
place; a possessive place ("Kelro's Old Town")."""

from __future__ import annotations

import pytest

from environments.graphrag.nlp_lines import reading_units
from tests.graphrag.spacy_reading import triples


def test_a_definite_description_is_the_name_it_described(spacy_extract):
    got = triples(spacy_extract, "Tovrik is a charitable organisation headquartered in Kelro. It was founded by Ann "
                                 "Orvel, who studied at the University of Brask. The organisation has regional offices "
                                 "in Lenmar and in Osterby.")
    assert {("Tovrik", "office_in", "Lenmar", False), ("Tovrik", "office_in", "Osterby", False)} <= got
    assert not any(h == "University of Brask" and r == "office_in" for h, r, _, _ in got)
    got = triples(spacy_extract, "The Kelro Philharmonic is a symphony orchestra based in Kelro. Ann Orvel, who was born "
                                 "in Lenmar, conducts it. The orchestra partners with the Brask Opera.")
    assert ("Kelro Philharmonic", "partners_with", "Brask Opera", False) in got
    assert not any(h == "Ann Orvel" and r == "partners_with" for h, r, _, _ in got)


def test_a_subject_noun_with_an_apposed_name_is_that_name(spacy_extract):
    got = triples(spacy_extract, "Velmora is a payments company headquartered in Kelro. Its chief executive, Tomas "
                                 "Ardeni, was born in Lenmar.")
    assert ("Tomas Ardeni", "born_in", "Lenmar", False) in got


@pytest.mark.parametrize(("text", "employer"), [
    ("Brask Dairy is a farmers' cooperative headquartered in Kelro. Its chief executive, Tomas Ardeni, works for the "
     "cooperative from the Kelro head office.", "Brask Dairy"),
    ("Velmora, the engineering group founded by Ann Orvel, said it had opened a plant. Tomas Ardeni, the group's "
     "president, said so.", "Velmora"),
    ("The pumps are sold by Velmora Ltd, a small subsidiary whose chief executive is Tomas Ardeni.", "Velmora Ltd"),
    ("Velmora Corporation is an internet company. Tomas Ardeni has been chief executive since 2022.",
     "Velmora Corporation")])
def test_a_role_held_through_an_owner_phrase_is_work_for_the_owner(spacy_extract, text, employer):
    got = triples(spacy_extract, text)
    assert ("Tomas Ardeni", "works_for", employer, False) in got
    assert ("Tomas Ardeni", "works_for", "Kelro", False) not in got


def test_a_facility_noun_places_a_site_but_not_what_a_name_is(spacy_extract):
    got = triples(spacy_extract, "Velmora Corporation is headquartered in Kelro. Velmora runs data centres in Lenmar and "
                                 "Osterby.")
    assert {("Velmora Corporation", "office_in", "Lenmar", False),
            ("Velmora Corporation", "office_in", "Osterby", False)} <= got
    got = triples(spacy_extract, "The Brask Institute is an independent research centre in Kelro.")
    assert not any(r == "office_in" for _, r, _, _ in got)


def test_a_dateline_in_any_scripts_capitals_or_cut_at_a_month_is_dropped():
    units = reading_units(["KELRÖ, Aldovia, March 4 \u2014 Brask Labs said on Monday it would grow."])
    assert [t for _, t in units] == ["Brask Labs said on Monday it would grow.", "Kelrö is located in Aldovia."]
    units = reading_units(["KELRO, Nov.", "2 \u2014 Brask Labs said it would grow.", "He left on Dec.", "3 of 1990."])
    assert [t for _, t in units] == ["Brask Labs said it would grow.", "He left on Dec. 3 of 1990."]  # no region


def test_a_datelines_city_is_in_its_region_and_a_possessed_place_in_its_owner(spacy_extract):
    got = triples(spacy_extract, "LENMAR, Aldovia, Nov. 2 \u2014 Velmora Group said on Monday it would grow. The company "
                                 "is headquartered in Lenmar.")
    assert ("Lenmar", "located_in", "Aldovia", False) in got
    assert ("Velmora Group", "headquartered_in", "Lenmar", False) in got
    assert not any(h == "Lenmar" and r != "located_in" for h, r, _, _ in got)
    got = triples(spacy_extract, "The concert hall is in Prague's Old Town.")
    assert ("Old Town", "located_in", "Prague", False) in got
