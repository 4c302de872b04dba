"""The rule-based extractor on forms of other writers' English (issue 38.3): one sentence per
form, written for this test (names invented here, none from any corpus or data set)."""

from __future__ import annotations

import pytest

from environments.graphrag.corpus import Document
from environments.graphrag.lexicon import LexiconExtractor

RELATIONS = ["born_in", "citizen_of", "colleague_of", "founded_by", "headquartered_in", "lives_in", "located_in",
             "office_in", "partners_with", "studied_at", "works_for"]


def read(*sentences: str) -> set[tuple[str, str, str]]:
    """A user's untitled paragraph, as `graphrag extract FILE` reads one."""
    doc = Document("u0", "", list(sentences))
    return {(s.head, s.relation, s.tail) for s in LexiconExtractor(RELATIONS)([doc]) if not s.negated}


FORMS = [
    ("field lines", ("Tomas Verhal - profile Born: Quenby, 1970 Citizenship: Aldovia Employer: Brask Foods",),
     {("Tomas Verhal", "born_in", "Quenby"), ("Tomas Verhal", "citizen_of", "Aldovia"),
      ("Tomas Verhal", "works_for", "Brask Foods")}),
    ("field value list", ("Ilse Marn - Education: Hollin College (B.A.); Pember Institute (MBA)",),
     {("Ilse Marn", "studied_at", "Hollin College"), ("Ilse Marn", "studied_at", "Pember Institute")}),
    ("passive founders list", ("Orvel Tools was founded in 1961 by Ada Pike, Ben Roe and Cy Dunn.",),
     {("Orvel Tools", "founded_by", "Ada Pike"), ("Orvel Tools", "founded_by", "Ben Roe"),
      ("Orvel Tools", "founded_by", "Cy Dunn")}),
    ("active founders", ("In 1990 Ada Pike founded Orvel Tools.",), {("Orvel Tools", "founded_by", "Ada Pike")}),
    ("fronted participle", ("Born in Quenby and a citizen of Aldovia, Lena Sorr studied at Hollin College.",),
     {("Lena Sorr", "born_in", "Quenby"), ("Lena Sorr", "citizen_of", "Aldovia"),
      ("Lena Sorr", "studied_at", "Hollin College")}),
    ("fronted with pronoun", ("Lena Sorr is a painter.", "Born in Quenby, she lives in Marrow."),
     {("Lena Sorr", "born_in", "Quenby"), ("Lena Sorr", "lives_in", "Marrow")}),
    ("apposition place", ("Lena Sorr was born in Quenby, a small town in Aldovia, in 1980.",),
     {("Lena Sorr", "born_in", "Quenby"), ("Quenby", "located_in", "Aldovia")}),
    ("parenthesised apposition", ("Marrow (a port city of Aldovia) is old.",), {("Marrow", "located_in", "Aldovia")}),
    ("capital of", ("Marrow is the capital of Aldovia.",), {("Marrow", "located_in", "Aldovia")}),
    ("city in", ("Marrow is a city in Aldovia.",), {("Marrow", "located_in", "Aldovia")}),
    ("the company", ("Orvel Tools makes saws.", "The company is headquartered in Marrow."),
     {("Orvel Tools", "headquartered_in", "Marrow")}),
    ("headquarters are in", ("Orvel Tools makes saws.", "Its headquarters are in Marrow."),
     {("Orvel Tools", "headquartered_in", "Marrow")}),
    ("offices list", ("Orvel Tools has offices in Marrow, Quenby and Tesk.",),
     {("Orvel Tools", "office_in", "Marrow"), ("Orvel Tools", "office_in", "Quenby"),
      ("Orvel Tools", "office_in", "Tesk")}),
    ("place qualifier", ("Orvel Tools is headquartered in Marrow, Aldovia.",),
     {("Orvel Tools", "headquartered_in", "Marrow")}),
    ("there", ("Lena Sorr was born in Quenby and still lives there.",),
     {("Lena Sorr", "born_in", "Quenby"), ("Lena Sorr", "lives_in", "Quenby")}),
    ("moved to", ("Lena Sorr moved to Marrow in 2001.",), {("Lena Sorr", "lives_in", "Marrow")}),
    ("graduate of", ("Lena Sorr is a graduate of Hollin College.",), {("Lena Sorr", "studied_at", "Hollin College")}),
    ("alumna of", ("Lena Sorr is an alumna of Hollin College.",), {("Lena Sorr", "studied_at", "Hollin College")}),
    ("on the staff of", ("Lena Sorr is on the staff of Brask Foods.",), {("Lena Sorr", "works_for", "Brask Foods")}),
    ("noun before citizen", ("Lena Sorr, an Aldovia citizen, paints.",), {("Lena Sorr", "citizen_of", "Aldovia")}),
    ("hyphenated born", ("Quenby-born Lena Sorr paints.",), {("Lena Sorr", "born_in", "Quenby")}),
    ("hyphenated based", ("Marrow-based Orvel Tools makes saws.",), {("Orvel Tools", "headquartered_in", "Marrow")}),
    ("his colleague", ("Lena Sorr paints.", "Her colleague Bo Tarn sculpts."), {("Lena Sorr", "colleague_of", "Bo Tarn")}),
    ("is his colleague", ("Lena Sorr paints.", "Bo Tarn is her colleague."), {("Lena Sorr", "colleague_of", "Bo Tarn")}),
    ("speaker", ("'I was born in Quenby,' says Lena Sorr.",), {("Lena Sorr", "born_in", "Quenby")}),
    ("who after a place", ("Lena Sorr is a citizen of Aldovia who was born in Quenby.",),
     {("Lena Sorr", "citizen_of", "Aldovia"), ("Lena Sorr", "born_in", "Quenby")}),
    ("name with of and de", ("Jan de Vries studied at the University of Tesk.",),
     {("Jan de Vries", "studied_at", "University of Tesk")}),
    ("name with ampersand", ("Pike & Roe was founded by Ada Pike.",), {("Pike & Roe", "founded_by", "Ada Pike")}),
    ("name with comma suffix", ("Orvel Tools, Inc. is based in Marrow.",),
     {("Orvel Tools, Inc.", "headquartered_in", "Marrow")}),
    ("dotted name", ("Brask.com is based in Marrow.",), {("Brask.com", "headquartered_in", "Marrow")}),
    ("non-ASCII name", ("Ødegård Bryggeri is headquartered in Tromsø.",),
     {("Ødegård Bryggeri", "headquartered_in", "Tromsø")}),
    ("sentence opener", ("Today Lena Sorr works for Brask Foods.",), {("Lena Sorr", "works_for", "Brask Foods")}),
    ("dateline header", ("MARROW - Orvel Tools is headquartered in Marrow.",),
     {("Orvel Tools", "headquartered_in", "Marrow")}),
    ("partnered with", ("Orvel Tools has partnered with Brask Foods since 2010.",),
     {("Orvel Tools", "partners_with", "Brask Foods")}),
]


@pytest.mark.parametrize(("form", "sentences", "expected"), FORMS, ids=[f[0] for f in FORMS])
def test_form_is_read(form: str, sentences: tuple[str, ...], expected: set[tuple[str, str, str]]) -> None:
    got = read(*sentences)
    assert expected <= got, f"{form}: missing {expected - got}, got {got}"


def test_qualifier_and_parenthesis_state_nothing() -> None:
    got = read("Orvel Tools is headquartered in Marrow, Aldovia.", "Lena Sorr was born in Quenby (then Ostrel).")
    assert ("Orvel Tools", "headquartered_in", "Aldovia") not in got
    assert ("Lena Sorr", "born_in", "Ostrel") not in got


def test_passive_founders_do_not_found_each_other() -> None:
    got = read("Orvel Tools was founded in 1961 by Ada Pike and Ben Roe.")
    assert not {t for t in got if t[0] in ("Ada Pike", "Ben Roe")}
