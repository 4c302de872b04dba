"""Type checks and the untitled-paragraph rules of the rule-based extractor (issue 38.3): kinds
from name shape and the GeoNames gazetteer, each relation's head and tail kinds, and one invented
sentence per rule (names made up here, none from any corpus or data set)."""

from __future__ import annotations

import itertools
import random

import pytest

from environments.graphrag import lexicon_types as types
from environments.graphrag.corpus import Document
from environments.graphrag.lexicon import LexiconExtractor

RELATIONS = ["affiliated_with", "born_in", "citizen_of", "colleague_of", "founded_by", "headquartered_in", "lives_in",
             "located_in", "office_in", "partners_with", "studied_at", "works_for"]
SYLLABLES = ["vor", "qua", "lin", "dra", "mes", "tok", "ul", "bre", "zan", "pim", "orth", "wex"]


def invented(rng: random.Random, words: int = 1) -> str:
    """A made-up capitalised name no gazetteer holds."""
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize() + "x" for _ in range(words))


def read(*sentences: str, title: str = "") -> set[tuple[str, str, str]]:
    doc = Document("u0", title, list(sentences))
    return {(s.head, s.relation, s.tail) for s in LexiconExtractor(RELATIONS)([doc]) if not s.negated}


# Properties of the kinds and the relation table.

def test_shape_gives_schools_and_organisations_whatever_the_invented_stem():
    rng = random.Random(7)
    for _ in range(200):
        stem = invented(rng)
        assert types.kind(f"University of {stem}") == types.SCHOOL
        assert types.kind(f"{stem} College") == types.SCHOOL
        for suffix in ("Group", "Labs", "Inc.", "AG", "Systems"):
            assert types.kind(f"{stem} {suffix}") == types.ORG
        assert types.kind(stem) == types.UNKNOWN  # no shape and no gazetteer entry: never rejected


def test_every_gazetteer_country_is_a_country_and_a_shape_beats_the_gazetteer():
    countries, cities = types.gazetteer()
    assert len(countries) > 200 and len(cities) > 20000 and not countries & cities
    assert all(types.kind(c) == types.COUNTRY for c in countries)
    assert types.kind("Kenya Airways") == types.ORG  # a country's name inside a company's


@pytest.mark.parametrize("relation", sorted(types.REJECT))
def test_a_relation_refuses_exactly_the_kinds_of_its_table(relation):
    """For each kind an example name; a statement fits unless an end's kind is refused, or a
    person's end is not person-like."""
    rng = random.Random(relation)
    examples = {types.SCHOOL: f"University of {invented(rng)}", types.ORG: f"{invented(rng)} Group",
                types.COUNTRY: "Kenya", types.CITY: "Nairobi", types.UNKNOWN: invented(rng, 2)}
    heads, tails = types.REJECT[relation]
    for (hk, head), (tk, tail) in itertools.product(examples.items(), repeat=2):
        expected = hk not in heads and tk not in tails
        if relation in types.PERSON_HEAD:
            expected = expected and hk == types.UNKNOWN
        if relation in types.PERSON_TAIL:
            expected = expected and tk == types.UNKNOWN
        assert types.fits(head, relation, tail) == expected, (head, relation, tail)


def test_unknown_two_word_names_always_fit():
    rng = random.Random(3)
    for _ in range(100):
        head, tail = invented(rng, 2), invented(rng, 2)
        assert all(types.fits(head, r, tail) for r in RELATIONS)


def test_a_paragraph_whose_roles_agree_keeps_every_statement():
    rng = random.Random(11)
    for _ in range(50):
        person, place, org = invented(rng, 2), invented(rng), f"{invented(rng)} Labs"
        given = [(person, "born_in", place), (person, "works_for", org), (org, "headquartered_in", place)]
        assert types.typed(given) == [True, True, True]


def test_a_name_stated_as_a_place_founds_nothing():
    given = [("Orvel Tools", "headquartered_in", "Quenby"), ("Lena Sorr", "lives_in", "Quenby"),
             ("Quenby", "founded_by", "Ada Pike")]
    assert types.typed(given) == [True, True, False]


# One invented sentence per rule of untitled paragraphs.

RULES = [
    ("type: a town founds nothing", ("Orvel Group was founded in Marrow in 1961 by Ada Pike.",),
     {("Orvel Group", "founded_by", "Ada Pike")}, {("Orvel Group", "founded_by", "Marrow")}),
    ("type: a city founds nothing", ("Orvel Group was founded in Nairobi in 1961 by Ada Pike.",),
     {("Orvel Group", "founded_by", "Ada Pike")}, {("Orvel Group", "founded_by", "Nairobi")}),
    ("type: a school is no headquarters", ("Orvel Tools is headquartered in Marrow, home of Hollin University.",),
     {("Orvel Tools", "headquartered_in", "Marrow")}, {("Orvel Tools", "headquartered_in", "Hollin University")}),
    ("person-like head", ("Yesterday Ada Pike spoke. Interviewer was born in Quenby.",),
     set(), {("Interviewer", "born_in", "Quenby")}),
    ("country after a town", ("Lena Sorr was born in Quenby, in northern Kenya.",),
     {("Lena Sorr", "born_in", "Quenby")}, {("Lena Sorr", "born_in", "Kenya")}),
    ("landmark", ("Orvel Tools is headquartered in Quenby, just north of Marrow.",),
     {("Orvel Tools", "headquartered_in", "Quenby")}, {("Orvel Tools", "headquartered_in", "Marrow")}),
    ("qualifier is a region", ("Orvel Tools is headquartered in Quenby, Aldovia.",),
     {("Orvel Tools", "headquartered_in", "Quenby"), ("Quenby", "located_in", "Aldovia")}, set()),
    ("field qualifier", ("Lena Sorr - Born: Quenby, Aldovia",),
     {("Lena Sorr", "born_in", "Quenby"), ("Quenby", "located_in", "Aldovia")}, {("Lena Sorr", "born_in", "Aldovia")}),
    ("school in a place", ("Lena Sorr studied law at Hollin University in Marrow.",),
     {("Lena Sorr", "studied_at", "Hollin University"), ("Hollin University", "located_in", "Marrow")},
     {("Lena Sorr", "studied_at", "Marrow")}),
    ("subject before the school", ("Lena Sorr studied Aldovian at Hollin University.",),
     {("Lena Sorr", "studied_at", "Hollin University")}, {("Lena Sorr", "studied_at", "Aldovian")}),
    ("originally from", ("Lena Sorr is originally from Quenby.",), {("Lena Sorr", "born_in", "Quenby")}, set()),
    ("a town native", ("Lena Sorr, a Quenby native, paints.",), {("Lena Sorr", "born_in", "Quenby")}, set()),
    ("alumnus of", ("Tom Brask is an alumnus of Hollin University.",),
     {("Tom Brask", "studied_at", "Hollin University")}, set()),
    ("went to a school only", ("Tom Brask went to Hollin College.", "Lena Sorr went to Marrow."),
     {("Tom Brask", "studied_at", "Hollin College")}, {("Lena Sorr", "studied_at", "Marrow")}),
    ("on the payroll of", ("Tom Brask is on the payroll of Orvel Tools.",),
     {("Tom Brask", "works_for", "Orvel Tools")}, set()),
    ("has an office in", ("Orvel Tools has an office in Marrow.",), {("Orvel Tools", "office_in", "Marrow")}, set()),
    ("a town's office", ("Orvel Tools is growing. Besides its Marrow office, it runs offices in Quenby.",),
     {("Orvel Tools", "office_in", "Marrow"), ("Orvel Tools", "office_in", "Quenby")}, set()),
    ("partner of", ("Orvel Tools is a partner of Brask Foods.",), {("Orvel Tools", "partners_with", "Brask Foods")},
     set()),
    ("partner field", ("Orvel Tools fact sheet.", "Partner: Brask Foods."),
     {("Orvel Tools", "partners_with", "Brask Foods")}, set()),
    ("address field", ("Lena Sorr - Address: Quenby",), {("Lena Sorr", "lives_in", "Quenby")}, set()),
    ("closed-class opener", ("Orvel Tools was founded by Ada Pike. With its headquarters in Marrow, it grew.",),
     {("Orvel Tools", "headquartered_in", "Marrow")}, {("With", "headquartered_in", "Marrow")}),
    ("-ing opener", ("Having studied at Hollin College, Tom Brask works for Orvel Tools.",),
     {("Tom Brask", "works_for", "Orvel Tools")}, {("Having", "studied_at", "Hollin College")}),
    ("a cut name is no entity", ("Lena Sorr studied at the École Quenbienne.",),
     set(), {("Lena Sorr", "studied_at", "École")}),
    ("names over 'of the'", ("Tom Brask studied at the University of the Marrow Hills.",),
     {("Tom Brask", "studied_at", "University of the Marrow Hills")}, set()),
    ("elided article in a name", ("Lena Sorr is a citizen of Côte d'Orvel.",),
     {("Lena Sorr", "citizen_of", "Côte d'Orvel")}, set()),
    ("a role is no part of a name", ("Lena Sorr Chairman, Orvel Group. Born: Quenby",),
     {("Lena Sorr", "born_in", "Quenby")}, {("Lena Sorr Chairman", "born_in", "Quenby")}),
    ("topic is a name", ("Company fact sheet, Orvel Tools. Founder: Ada Pike.",),
     {("Orvel Tools", "founded_by", "Ada Pike")}, {("Company", "founded_by", "Ada Pike")}),
]


@pytest.mark.parametrize(("rule", "sentences", "wanted", "unwanted"), RULES, ids=[r[0] for r in RULES])
def test_rule(rule: str, sentences: tuple[str, ...], wanted: set, unwanted: set) -> None:
    got = read(*sentences)
    assert wanted <= got, f"{rule}: missing {wanted - got}, got {got}"
    assert not unwanted & got, f"{rule}: stated {unwanted & got}"


def test_a_titled_document_reads_none_of_the_untitled_rules():
    """The project's own corpora are titled: the held-out phrasings stay unread there, and no
    type check runs."""
    assert ("Lena Sorr", "born_in", "Quenby") not in read("Lena Sorr is originally from Quenby.", title="Lena Sorr")
    clash = ("Lena Sorr", "born_in", "Hollin University")
    assert clash in read("Lena Sorr was born in Hollin University.", title="Lena Sorr")
    assert clash not in read("Lena Sorr was born in Hollin University.")
