"""Links between two organisations or two people, for the spaCy extractor (issue 50, set 10's
error classes: no ``affiliated_with`` or ``colleague_of`` statement at all), each on invented
text, each failing on the extractor before (main fc27952): a part of, owned by, a member of or
controlled by a group (``affiliated_with``), and nothing for a past link, a stake or a place;
codeshares, joint businesses and joint ventures (``partners_with``); working closely, together or
alongside (``colleague_of``), and nothing for founding together; field labels of memberships and
teammates. Beside them, set 10's two other weakest relations: a student at, enrolled at or
studying at a school (``studied_at``), and a fact sheet's campus, plant and site fields
(``office_in``)."""

from __future__ import annotations

from tests.graphrag.spacy_reading import triples


def _links(got: set[tuple[str, str, str, bool]], relation: str) -> set[tuple[str, str]]:
    return {(h, t) for h, r, t, n in got if r == relation and not n}


def test_a_part_member_or_holding_of_a_group_is_affiliated_with_it(spacy_extract):
    got = triples(spacy_extract, "Brask Telecom, the mobile operator, is part of Velmora Holdings. Kelro Airways is a "
                                 "member of the Skyreach Alliance.")
    assert ("Brask Telecom", "Velmora Holdings") in _links(got, "affiliated_with")
    assert any(h == "Kelro Airways" and "Skyreach" in t for h, t in _links(got, "affiliated_with"))
    got = triples(spacy_extract, "Osterby Foods is headquartered in Lenmar and is owned by Velmora Holdings.")
    assert ("Osterby Foods", "Velmora Holdings") in _links(got, "affiliated_with")
    got = triples(spacy_extract, "Velmora Holdings, which is headquartered in Lenmar, also owns Brask Dairy.")
    assert ("Brask Dairy", "Velmora Holdings") in _links(got, "affiliated_with")


def test_a_past_link_a_stake_a_place_or_a_person_is_no_affiliation(spacy_extract):
    for text in ("Brask Telecom was part of Velmora Holdings until 2019.",
                 "Velmora Holdings owns a stake in Brask Dairy.",
                 "Osterby is part of Kelro, a region of Lenmar.",
                 "Brask Dairy is owned by Ann Orvel, who lives in Kelro."):
        assert not _links(triples(spacy_extract, text), "affiliated_with"), text
    got = triples(spacy_extract, "Brask Telecom was part of Velmora Holdings until 2019.")
    assert not any(h == "Brask Telecom" for h, _, _, _ in got)  # not a place of it either (the extractor before)


def test_codeshares_joint_businesses_and_joint_ventures_are_partnerships(spacy_extract):
    got = triples(spacy_extract, "Kelro Airways has codeshare agreements with Brask Air and Velmora Airlines.")
    assert {("Kelro Airways", "Brask Air"), ("Kelro Airways", "Velmora Airlines")} <= _links(got, "partners_with")
    got = triples(spacy_extract, "Kelro Airways also runs a joint business with Brask Air on routes to Lenmar.")
    assert ("Kelro Airways", "Brask Air") in _links(got, "partners_with")
    got = triples(spacy_extract, "Lenmar Drive, the joint venture between Brask Motors and Velmora Industries, is based "
                                 "in Osterby.")
    assert ("Brask Motors", "Velmora Industries") in _links(got, "partners_with")


def test_working_closely_together_or_alongside_makes_colleagues(spacy_extract):
    got = triples(spacy_extract, "Ann Orvel works closely with Tomas Ardeni on the new strategy.")
    assert ("Ann Orvel", "Tomas Ardeni") in _links(got, "colleague_of")
    got = triples(spacy_extract, "Ann Orvel, who runs the family company together with her brother Tomas Ardeni, lives "
                                 "in Kelro.")
    assert ("Ann Orvel", "Tomas Ardeni") in _links(got, "colleague_of")
    got = triples(spacy_extract, "The studio was founded by Ann Orvel and Tomas Ardeni, who still work together.")
    assert {("Ann Orvel", "Tomas Ardeni"), ("Tomas Ardeni", "Ann Orvel")} & _links(got, "colleague_of")  # symmetric


def test_founding_together_makes_no_colleagues(spacy_extract):
    got = triples(spacy_extract, "Ann Orvel founded Brask Studio together with Tomas Ardeni in 1990.")
    assert not _links(got, "colleague_of")


def test_membership_and_teammate_fields(spacy_extract):
    got = triples(spacy_extract, "Lenmar University\nHeadquarters: Kelro\nNetwork membership: Skyreach Universities "
                                 "Network", title="Lenmar University")
    assert any(h == "Lenmar University" and "Skyreach" in t for h, t in _links(got, "affiliated_with"))
    got = triples(spacy_extract, "Tomas Ardeni\nBorn: Kelro\nClub teammates include: Ann Orvel; Eva Lindqvist",
                  title="Tomas Ardeni")
    assert {("Tomas Ardeni", "Ann Orvel"), ("Tomas Ardeni", "Eva Lindqvist")} <= _links(got, "colleague_of")


def test_a_student_enrolled_at_or_studying_at_a_school_studied_there(spacy_extract):
    got = triples(spacy_extract, "Tomas Ardeni, a graduate student at Kelro University, lives in Osterby.")
    assert ("Tomas Ardeni", "studied_at", "Kelro University", False) in got
    got = triples(spacy_extract, "Ann Orvel enrolled at Lenmar University in 2001.")
    assert ("Ann Orvel", "studied_at", "Lenmar University", False) in got
    got = triples(spacy_extract, "Ann Orvel, who was studying economics in Kelro, founded Brask Labs.")
    assert not any(r == "studied_at" for _, r, _, _ in got)  # a place is no school


def test_a_fact_sheets_campus_plant_and_site_fields_are_offices(spacy_extract):
    got = triples(spacy_extract, "Brask Motors\nHeadquarters: Kelro\nFurther campus: Osterby\nDomestic plants: Lenmar; "
                                 "Velby", title="Brask Motors")
    assert {("Brask Motors", "office_in", t, False) for t in ("Osterby", "Lenmar", "Velby")} <= got
