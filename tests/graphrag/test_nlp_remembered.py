"""A name the reading remembers from an earlier line as the other end of a fact (session 20, issue 50
items 1-2), on invented text: a sheet's subject given once and roles listed below it, an appointment
to a role, "the company" after another organisation was named, and "and" inside one name."""

from __future__ import annotations

from environments.graphrag.nlp_lines import role_label
from tests.graphrag.spacy_reading import pairs, triples


def test_a_label_that_names_a_role_among_other_words_is_a_role():
    assert role_label("managing director and ceo") == (True, [])
    assert role_label("founder and president") == (True, ["founder"])
    assert role_label("head coach") == (True, [])
    assert role_label("key players") == (True, [])
    assert role_label("headquarters")[0] is False and role_label("head office")[0] is False
    assert role_label("stepped down as artistic director")[0] is False  # a sentence's opening, no label


def test_a_sheets_roles_work_for_its_subject_and_a_founders_role_founds_it(spacy_extract):
    got = triples(spacy_extract, "Orvanta Holdings\nHeadquarters: Velmora\n"
                                 "Chairman, president and CEO: Jana Kostrel\nFounder and president: Oskar Brenn\n"
                                 "Principal guest conductor: Ilse Varro\nPrevious director: Tom Harl")
    works = pairs(got, "works_for")
    assert {("Jana Kostrel", "Orvanta Holdings"), ("Oskar Brenn", "Orvanta Holdings"),
            ("Ilse Varro", "Orvanta Holdings")} <= works
    assert ("Orvanta Holdings", "Oskar Brenn") in pairs(got, "founded_by")
    assert ("Tom Harl", "Orvanta Holdings") not in works  # a former role states no present fact


def test_a_plural_role_label_gives_every_name_listed(spacy_extract):
    got = triples(spacy_extract, "Fact file - Velmora Rovers\nHead coach: Tarek Osun\n"
                                 "Key players: Ivo Maren; Luka Desh; Pavo Rennet")
    assert {(p, "Velmora Rovers") for p in ("Tarek Osun", "Ivo Maren", "Luka Desh", "Pavo Rennet")} <= \
        pairs(got, "works_for")


def test_a_sheets_first_field_whose_value_is_one_name_names_its_subject(spacy_extract):
    got = triples(spacy_extract, "Museum: Kestrel Art Museum\nLocation: Velmora\nDirector: Ann Pollard (since 2020)")
    assert ("Ann Pollard", "Kestrel Art Museum") in pairs(got, "works_for")
    assert not any("Museum" == h for h, _ in pairs(got, "works_for") | pairs(got, "located_in"))


def test_an_appointment_to_a_role_is_holding_it_and_a_past_role_is_not(spacy_extract):
    got = triples(spacy_extract, "Orvanta is a Velmora-based maker of pumps. Jana Kostrel was appointed chief "
                                 "executive in 2024. Tom Harl was chief executive until 2019.")
    works = pairs(got, "works_for")
    assert ("Jana Kostrel", "Orvanta") in works and ("Tom Harl", "Orvanta") not in works


def test_the_company_is_the_last_organisation_that_was_a_subject_not_the_last_one_named(spacy_extract):
    got = triples(spacy_extract, "Orvanta Limited makes hearing implants. It is based on the campus of Kelro "
                                 "University. The company is led by Jana Kostrel.")
    works = pairs(got, "works_for")
    assert ("Jana Kostrel", "Orvanta Limited") in works and ("Jana Kostrel", "Kelro University") not in works


def test_and_inside_one_name_after_its_of_is_no_list(spacy_extract):
    got = triples(spacy_extract, "Ann Pollard studied at the Velmora University of Science and Technology. "
                                 "Tom Harl and Ivo Maren studied at Kelro University.")
    studied = pairs(got, "studied_at")
    assert ("Ann Pollard", "Velmora University of Science and Technology") in studied
    assert {("Tom Harl", "Kelro University"), ("Ivo Maren", "Kelro University")} <= studied
