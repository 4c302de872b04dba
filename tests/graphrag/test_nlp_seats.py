"""A place field's comma chain and an organisation's "X-based" seat, for the spaCy extractor
(issue 50: two error classes that recur over the development sets 4-10), each on invented text,
each failing on the extractor before (main 08dfce8) except the guards: a date or a number before
a field's places ("Born: 12 May 1950, Lyon, France"), a place the tagger reads as a person or an
organisation inside the chain, ";"-separated items of a plural label; "the X-based maker of Y"
seats the name it apposes, not Y; "the X-based company" in a later sentence is the organisation
named before it; "the X-based practice that A founded" is no seat of A's."""

from __future__ import annotations

from tests.graphrag.spacy_reading import pairs as _pairs
from tests.graphrag.spacy_reading import triples


def test_a_place_fields_comma_chain_after_a_date_or_a_number(spacy_extract):
    got = triples(spacy_extract, "Tomas Ardeni\nBorn: 12 May 1950, Lyon, France\nCitizenship: France")
    assert ("Lyon", "France") in _pairs(got, "located_in")
    got = triples(spacy_extract, "Brask Motors\nHeadquarters: Fuchū, Aki District, Hiroshima Prefecture, Japan")
    assert {("Fuchū", "Aki District"), ("Aki District", "Hiroshima Prefecture"),
            ("Hiroshima Prefecture", "Japan")} <= _pairs(got, "located_in")
    got = triples(spacy_extract, "Brask Motors\nHead office: 14 Harbour Road, Gdynia, Poland")
    assert ("Gdynia", "Poland") in _pairs(got, "located_in")


def test_items_of_a_plural_field_and_what_is_no_chain(spacy_extract):
    got = triples(spacy_extract, "Brask Motors\nOther sites: Évora, Portugal (gearboxes); Tampere, Finland (engines)")
    assert {("Évora", "Portugal"), ("Tampere", "Finland")} <= _pairs(got, "located_in")
    for text in ("Brask Motors\nOffices: Lima, Quito and Bogotá",
                 "Brask Motors\nOther sites: Lima, Quito, Bogotá",
                 "Brask Motors\nHeadquarters: Osterby, in the south of Kelro"):
        assert not _pairs(triples(spacy_extract, text), "located_in"), text


def test_an_x_based_description_seats_the_organisation_it_describes(spacy_extract):
    got = triples(spacy_extract, "Velmora Holdings, the London-headquartered maker of Brask soap, said on Monday it "
                                 "would sell fewer brands.")
    assert ("Velmora Holdings", "London") in _pairs(got, "headquartered_in")
    assert not any(h.startswith("Brask") for h, _ in _pairs(got, "headquartered_in"))
    got = triples(spacy_extract, "Velmora Holdings said on Tuesday it had raised its sales forecast.\nChairman Ann "
                                 "Orvel said the Lyon-based company would keep investing in small cars.")
    assert ("Velmora Holdings", "Lyon") in _pairs(got, "headquartered_in")


def test_the_founder_of_an_x_based_practice_has_no_seat(spacy_extract):
    got = triples(spacy_extract, "The hall was designed by Orvel & Ardeni, the Basel-based practice that Ann Orvel and "
                                 "Tomas Ardeni founded in 1978.")
    assert not any(h in ("Ann Orvel", "Tomas Ardeni") for h, _ in _pairs(got, "headquartered_in"))
