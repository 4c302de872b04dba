"""Set 6's error classes (issue 50 items 1-2), read by the spaCy extractor on invented text: a
question's reply (a yes/no question asserts nothing unless answered "Yes"; a "who" question
answered by a whole sentence names its people), a possessive seat ("its headquarters are in X"),
"the X-based company" as an object, dates that are no names, a page subject's legal suffix, a
field line after an initial; and the inverted located_in of a relative clause (item 2)."""

from __future__ import annotations

import pytest

from tests.graphrag.spacy_reading import triples


def test_a_relative_clause_place_is_not_inverted(spacy_extract):
    got = triples(spacy_extract, "The mill, which is in Leeds, in the county of Yorkshire, closed.")
    assert ("Yorkshire", "located_in", "Leeds", False) not in got


@pytest.mark.parametrize(("text", "want"), [  # a head after its cue that is the sentence's subject stays
    ("Born in Oslo, Ann Lee studied at Lund University.", ("Ann Lee", "born_in", "Oslo")),
    ("Founded in 1976 by Ann Lee and Bo Kim, the Acme Group is based in Oslo.", ("Acme Group", "founded_by", "Bo Kim")),
])
def test_a_fronted_clause_keeps_its_subject_as_head(spacy_extract, text, want):
    assert (*want, False) in triples(spacy_extract, text)


def test_a_yes_no_question_asserts_only_when_answered_yes(spacy_extract):
    no = triples(spacy_extract, "Does Maria Lindqvist still live in Bergen?\nNo. She moved to Oslo in 2023.")
    assert not any(t == "Bergen" for _, _, t, _ in no)
    yes = triples(spacy_extract, "Does Maria Lindqvist live in Bergen?\nYes, in the old town.")
    assert ("Maria Lindqvist", "lives_in", "Bergen", False) in yes


def test_a_who_question_answered_by_a_sentence_names_its_people(spacy_extract):
    got = triples(spacy_extract, "Who founded Brask Labs?\nFour people built its first version in 1999: "
                                 "Maria Lindqvist, Tomas Berg and Erik Dahl.")
    assert {("Brask Labs", "founded_by", n, False) for n in ("Maria Lindqvist", "Tomas Berg", "Erik Dahl")} <= got


def test_a_who_question_about_it_is_about_the_page(spacy_extract):
    got = triples(spacy_extract, "Where is the museum?\nOn a hill above the river.\nWho leads it?\n"
                                 "Jana Novak, who has been director since 2019.", title="Kelro Museum")
    assert ("Jana Novak", "works_for", "Kelro Museum", False) in got


@pytest.mark.parametrize("text", [
    "Its headquarters and oldest campus, including the hospital, are in Karachi, Pakistan.",
    "Its main campus is in Karachi.",
])
def test_a_possessive_seat_is_the_possessor_s_headquarters(spacy_extract, text):
    assert ("Brask University", "headquartered_in", "Karachi", False) in triples(spacy_extract, text,
                                                                                  title="Brask University")


def test_the_named_organisation_s_headquarters_not_the_speaker_s(spacy_extract):
    got = triples(spacy_extract, "Mark Rutte took charge of NATO on Tuesday at the alliance's headquarters in Brussels.")
    assert ("NATO", "headquartered_in", "Brussels", False) in got
    assert ("Mark Rutte", "headquartered_in", "Brussels", False) not in got


def test_a_place_based_company_as_an_object_is_the_company(spacy_extract):
    got = triples(spacy_extract, "ASML Holding named a new chief. Christophe Fouquet, who joined the "
                                 "Veldhoven-based company in 2008, takes over.")
    assert not any(r == "works_for" and t == "Veldhoven" for _, r, t, _ in got)


def test_a_date_is_no_place(spacy_extract):
    got = triples(spacy_extract, "Born: 2 July 1950, Abeokuta, Nigeria", title="Ann Orvel")
    assert ("Ann Orvel", "born_in", "Abeokuta", False) in got
    assert not any("July" in t for _, _, t, _ in got)


def test_the_page_subject_with_a_legal_suffix_is_the_subject(spacy_extract):
    text = "Brask Electronics Co., Ltd. is a maker of chips headquartered in Suwon."
    assert ("Brask Electronics", "headquartered_in", "Suwon", False) in triples(spacy_extract, text,
                                                                                 title="Brask Electronics")


def test_a_field_line_after_an_initial_starts_anew(spacy_extract):
    got = triples(spacy_extract, "Company: Brask S.A.\nSector: aerospace\nHeadquarters: Kelro, Aldovia",
                  title="Company profile: Brask S.A.")
    assert ("Brask S.A.", "headquartered_in", "Kelro", False) in got
    assert not any("Sector" in h for h, _, _, _ in got)


def test_a_sheet_s_site_partner_and_role_labels(spacy_extract):
    got = triples(spacy_extract, "Founded: 2012 in Kuala Lumpur\nCo-founder: Maria Lindqvist\nGroup CEO: Erik Dahl\n"
                                 "Other sites: Jakarta; Bengaluru\nKey partner: Kelro Bank",
                  title="Brask Holdings at a glance")
    assert {("Brask Holdings", "founded_by", "Maria Lindqvist", False), ("Erik Dahl", "works_for", "Brask Holdings", False),
            ("Brask Holdings", "office_in", "Jakarta", False), ("Brask Holdings", "office_in", "Bengaluru", False),
            ("Brask Holdings", "partners_with", "Kelro Bank", False)} <= got
    assert ("Brask Holdings", "founded_by", "Kuala Lumpur", False) not in got  # a place, no founder
