"""Names of one entity within a page, for the spaCy extractor (issue 50, set 9's error classes),
each on invented text, each failing on the extractor before (main a34677b): a legal text's
defined terms (``Velmora S.A. ("Velmora" or the "Company")``) and an undefined "the Company"; a
report's heading as a page's title ("Velmora Annual Report: Corporate Structure"); a legal form's
full stop ("Brask a.s."), a sentence cut after it, and a line that opens with a definition; "Ann
Orvel, co-founder of X" (no company "Ann Orvel, co"); a title with a company word the text leaves
off ("Velmora Inc.": Velmora, even inside a longer name, "Ann Velmora"); an organisation's name in
another language in a parenthesis after it."""

from __future__ import annotations

from tests.graphrag.spacy_reading import triples


def test_a_defined_term_is_the_name_it_was_defined_for(spacy_extract):
    got = triples(spacy_extract, 'Velmora Holding S.A. ("Velmora" or the "Company"), a company organised under the laws '
                                 "of Kelro, is headquartered in Lenmar. The Company operates a plant in Osterby.")
    assert ("Velmora Holding S.A.", "headquartered_in", "Lenmar", False) in got
    assert ("Velmora", "office_in", "Osterby", False) in got  # the term means the short name it defined
    assert not any("Company" in (h, t) for h, _, t, _ in got)
    got = triples(spacy_extract, 'Brask Savings Bank (the "Bank"), which is owned by the state, is headquartered in Kelro. '
                                 "The Bank operates branches in Lenmar and Osterby.")
    assert {("Brask Savings Bank", "office_in", "Lenmar", False),
            ("Brask Savings Bank", "office_in", "Osterby", False)} <= got
    assert not any("Bank" in (h, t) for h, _, t, _ in got)


def test_an_undefined_capitalised_term_is_no_name(spacy_extract):
    got = triples(spacy_extract, "The Company operates a plant in Osterby and an office in Lenmar.")
    assert not any(h == "Company" for h, _, _, _ in got)


def test_a_report_heading_title_gives_the_name_the_text_uses(spacy_extract):
    got = triples(spacy_extract, 'Velmora Rafineri A.Ş. ("Velmora" or the "Company") is headquartered in Kelro. It '
                                 "operates a refinery in Osterby.", title="Velmora Annual Report: Corporate Structure")
    assert not any("Annual Report" in h for h, _, _, _ in got)
    got = triples(spacy_extract, "The group operates plants in Lenmar and Osterby. Brask Holding was founded by Ann Orvel.",
                  title="Annual Report 2025 – Brask Holding")
    assert {("Brask Holding", "office_in", "Lenmar", False), ("Brask Holding", "office_in", "Osterby", False)} <= got
    assert not any("Annual Report" in h for h, _, _, _ in got)


def test_a_legal_form_keeps_its_full_stop_and_its_sentence(spacy_extract):
    got = triples(spacy_extract, 'Brask Dairy a.s. (the "Company") is headquartered in Kelro. Tomas Ardeni works for the '
                                 "Company.")
    assert ("Brask Dairy a.s.", "headquartered_in", "Kelro", False) in got
    assert ("Tomas Ardeni", "works_for", "Brask Dairy a.s.", False) in got
    got = triples(spacy_extract, 'Velmora, o.p.s. ("Velmora Aid" or the "Organisation"), a charity founded by Ann Orvel, '
                                 "operates offices in Lenmar and Osterby.")
    assert ("Velmora, o.p.s.", "founded_by", "Ann Orvel", False) in got
    assert not any("Organisation" in (h, t) for h, _, t, _ in got)


def test_a_co_founder_is_no_company(spacy_extract):
    got = triples(spacy_extract, "Ann Orvel, co-founder of Velmora, lives in Kelro.")
    assert ("Ann Orvel", "lives_in", "Kelro", False) in got
    assert not any(h.endswith(", co") for h, _, _, _ in got)


def test_a_title_with_a_company_word_is_the_name_the_text_uses(spacy_extract):
    got = triples(spacy_extract, "Velmora was founded by Ann Velmora in 1990. It is headquartered in Kelro. Tomas Ardeni "
                                 "is employed by Velmora as chief executive.", title="Velmora Inc.")
    assert {("Velmora", "headquartered_in", "Kelro", False), ("Tomas Ardeni", "works_for", "Velmora", False)} <= got
    assert ("Tomas Ardeni", "works_for", "Ann Velmora", False) not in got  # the subject, inside a longer name


def test_a_parenthesised_alternate_name_is_the_name_before_it(spacy_extract):
    got = triples(spacy_extract, "Velmora Dairy Corporation (Kelvo Mlekarna)\nFounded: 1990\n"
                                 "Founders: Ann Orvel and Tomas Ardeni\nHeadquarters: Kelro, Lenmar")
    assert {("Velmora Dairy Corporation", "founded_by", "Ann Orvel", False),
            ("Velmora Dairy Corporation", "headquartered_in", "Kelro", False)} <= got
    assert not any(h == "Kelvo Mlekarna" for h, _, _, _ in got)
