"""Where one place lies in another, read from how English strings place names together, for the
spaCy extractor (:mod:`environments.graphrag.nlp_extract`), wherever in a line the names stand
(not only after a cue such as "based in"):

- a qualifier: "in Lima, Peru", "a plant in Melbourne, Florida, and ..." (a comma, no list word:
  "Lima, Quito and Bogotá" is a list of three, not a place within another);
- "in": "born in Ogwashi-Ukwu in Delta State", "the University of X in Y";
- a place noun: "São José dos Campos, in the state of São Paulo", "the Pueblo Libre district of
  Lima", "Rondebosch, a suburb of Cape Town", "Tilonia, a village in the Ajmer district";
- a possessive: "Prague's Old Town", "Porto's Boavista district" (the possessed place is inside).

Only names spaCy labels places (GPE, LOC; a facility or an untagged name on the left) are read,
so "Ann Lee, London" or "Acme in Paris" state nothing here.
"""

from __future__ import annotations

import re
from typing import Any

from environments.graphrag.nlp_names import (
    SCHOOL_WORDS,
    Entity,
    State,
    ent_at,
    negated_before,
    organisation_shaped,
)

PLACE_NOUNS = {"state", "province", "region", "district", "county", "city", "town", "village", "municipality",
               "prefecture", "canton", "department", "suburb", "neighbourhood", "neighborhood", "borough", "ward",
               "island", "capital", "commune", "parish", "quarter", "area", "emirate", "governorate", "oblast"}
PLACES = ("GPE", "LOC")
LANDMARKS = {"museum", "park", "gallery", "memorial", "stadium", "arena", "cathedral", "temple", "church", "palace",
             "bridge", "tower", "market", "square", "garden", "gardens", "mosque", "castle", "street", "avenue",
             "lane", "beach", "waterfront", "pagoda", "monastery", "shrine", "theatre", "theater", "library", "zoo",
             "fort", "museo", "musée", "museu", "templo", "casa", "parque", "plaza", "basilica", "abbey", "harbour"}
DIRECTIONS = {"western", "eastern", "northern", "southern", "central", "downtown", "old", "greater", "inner",
              "north", "south", "east", "west", "upper", "lower", "nearby", "historic"}
_LIST = {",", "and", "or", "&", ";"}
_ARTICLES = {"the", "a", "an"}
_NOT_MODIFIERS = {"and", "or", "but", "not", "near", "outside", "than"}  # "A and district of B" places nothing


def place_pairs(doc: Any, ents: list[Entity]) -> list[tuple[str, str, str, bool]]:
    """``(inner, "located_in", outer, False)`` for each pair of adjacent names in the line that
    one of the module's patterns joins."""
    out = []
    for k, (a, b) in enumerate(zip(ents, ents[1:], strict=False)):
        if _possessed_place(doc, a, b):  # "Prague's Old Town", "Porto's Boavista district"
            out.append((b.name, "located_in", a.name, False))
            continue
        gap = [t.lower_ for t in doc[a.end:b.start]]
        if (a.kind == "person" and not landmark(a.name)) or b.kind == "person":
            continue
        if doc[b.start].ent_type_ not in PLACES:
            if _place_noun_gap(gap) and doc[b.start].ent_type_ in ("", "FAC", "ORG", "PRODUCT", "NORP") \
                    and not organisation_shaped(a.name) and not organisation_shaped(b.name):
                out.append((a.name, "located_in", b.name, False))  # "Brno, the capital of the Jihomoravský kraj"
            continue
        left = doc[a.start].ent_type_
        school = any(w in a.name.lower() for w in SCHOOL_WORDS)
        if organisation_shaped(a.name) and not (school and _in_gap(gap)):
            continue  # "Kyoto" read as an alias of "Kyoto University": the school is not what a qualifier places
        if gap == [","] and left in (*PLACES, "FAC", "") and not _in_list(doc, ents, k):
            out.append((a.name, "located_in", b.name, False))
        elif _in_gap(gap) and (left in (*PLACES, "FAC") or school or landmark(a.name)):
            out.append((a.name, "located_in", b.name, False))
        elif left in (*PLACES, "FAC", "") and not school and _place_noun_gap(gap):
            out.append((a.name, "located_in", b.name, False))
    return out


def _possessed_place(doc: Any, a: Entity, b: Entity) -> bool:
    """"A's B" where A is a place and B a place, a facility or a landmark by its name (not an
    organisation: "Italy's Leonardo")."""
    return b.start == a.end + 1 and doc[a.end].lower_ in ("'s", "\u2019s") and doc[a.start].ent_type_ in PLACES \
        and a.kind != "person" and b.kind != "person" and not organisation_shaped(b.name) \
        and (doc[b.start].ent_type_ in ("GPE", "FAC", "") or landmark(b.name)  # a LOC spans borders ("Caribbean")
             or (b.end < len(doc) and doc[b.end].lower_ in PLACE_NOUNS))  # "Boavista district", whatever its tag


def landmark(name: str) -> bool:
    """A building, park or street by its name's last word ("Serralves Museum", "Albert Park")."""
    words = name.lower().split()
    return bool(words) and (words[-1] in LANDMARKS or words[0] in LANDMARKS)


def _in_gap(gap: list[str]) -> bool:
    """"in", "in the", "in western": one place inside the other."""
    return gap[:1] == ["in"] and (len(gap) == 1 or (len(gap) == 2 and gap[1] in ("the", *DIRECTIONS)))


def _in_list(doc: Any, ents: list[Entity], k: int) -> bool:
    """Whether ents[k] and ents[k + 1] are two items of a list of names: a third name joined to
    them by list words only ("Lima, Quito and Bogotá", "offices in Lima, Quito, Cusco")."""
    def joined(x: Entity, y: Entity) -> bool:
        words = [t.lower_ for t in doc[x.end:y.start]]
        return bool(words) and all(w in _LIST for w in words)

    return (k > 0 and joined(ents[k - 1], ents[k])) or (k + 2 < len(ents) and joined(ents[k + 1], ents[k + 2]))


def _place_noun_gap(gap: list[str]) -> bool:
    """", in the state of", " district of", ", a suburb of", ", a village in the": at most one
    comma and "in" before an article, up to two modifiers, a place noun, then "of" or "in"."""
    words = list(gap)
    if words[:1] == [","]:
        words = words[1:]
    if words[:1] == ["in"]:
        words = words[1:]
    if words[:1] and words[0] in _ARTICLES:
        words = words[1:]
    if words[-1:] == ["the"]:
        words = words[:-1]
    if len(words) < 2 or words[-1] not in ("of", "in") or words[-2] not in PLACE_NOUNS:
        return False
    return len(words) <= 4 and all(w.isalpha() and w not in _NOT_MODIFIERS for w in words)


def seat(doc: Any, ents: list[Entity], state: State) -> list[tuple[str, str, str, bool]]:
    """"X is a private research university in Y": an organisation described by a noun placed
    "in" a place is headquartered there (``(X, "headquartered_in", Y, negated)``). Only a copula
    whose subject is a name spaCy or the name's shape calls an organisation, and whose noun's own
    "in" names a place (not "a leader in robotics")."""
    out = []
    for t in doc:
        if t.lemma_ != "be" or t.dep_ != "ROOT":
            continue
        subject = next((c for c in t.children if c.dep_ == "nsubj"), None)
        noun = next((c for c in t.children if c.dep_ == "attr" and c.pos_ == "NOUN"
                     and c.lower_ not in PLACE_NOUNS), None)  # "Quaury is a city in X": a place, no seat
        head = ent_at(doc, subject.i, ents) if subject is not None else None
        if head is None or noun is None or not (organisation_shaped(head.name) or state.kinds.get(head.name) == "ORG"
                                                or doc[head.start].ent_type_ == "ORG"):
            continue
        for prep in (c for c in noun.children if c.dep_ == "prep" and c.lower_ == "in"):
            obj = next((c for c in prep.children if c.dep_ == "pobj"), None)
            place = ent_at(doc, obj.i, ents) if obj is not None else None
            if place is not None and doc[place.start].ent_type_ in PLACES and place.kind != "person":
                out.append((head.name, "headquartered_in", place.name,
                            any(c.dep_ == "neg" for c in t.children) or negated_before(doc, place.start)))
    return out


_NAME_JOINS = {"de", "da", "do", "dos", "das", "del", "della", "di", "du", "la", "le", "el", "al", "am", "an", "der",
               "den", "van", "von", "y", "of", "upon", "on", "sur", "en", "i"}
_MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}


def value_places(value: str, listing: bool) -> list[tuple[str, str, str, bool]]:
    """A place field's value as its writer lays it out: "Born: 13 July 1934, Abeokuta, Nigeria",
    "Headquarters: Fuchū, Aki District, Hiroshima Prefecture, Japan", "Other sites: Évora,
    Portugal (composite structures); Melbourne, Florida": each place of a comma chain is in the
    next, whatever the tagger's label of its words. A leading date or street number is no place, a
    bracket ends an item, ";" separates items; a chain stops at a part that is no name ("near X",
    "in the south of Y"). ``listing`` (a plural label) reads commas as a list unless ";" separates
    the items; a part holding "and" or "or" makes the item a list."""
    items = value.split(";")
    if listing and len(items) < 2:
        return []
    out = []
    for item in items:
        parts = [p.strip() for p in re.split(r"[(\[]", item, maxsplit=1)[0].split(",")]
        while parts and _dated(parts[0]):
            parts = parts[1:]
        if parts and parts[0].lower().startswith("in "):
            parts[0] = parts[0][3:]
        chain = []
        for part in parts:
            if not _place_name(part):
                break
            chain.append(part)
        if any(re.search(r"\b(and|or)\b|&", p) for p in parts):
            continue
        out += [(a, "located_in", b, False) for a, b in zip(chain, chain[1:], strict=False)]
    return out


def _dated(part: str) -> bool:
    """"13 July 1934", "1945", "Reykjastræti 6": a date or a number, no place."""
    return bool(re.search(r"\d", part)) or (bool(part) and all(w.lower() in _MONTHS for w in part.split()))


def _place_name(part: str) -> bool:
    """Capitalised words, with the joining words of place names ("São José dos Campos")."""
    words = part.replace("-", " ").split()
    return 0 < len(words) <= 5 and words[0][:1].isupper() and not any(c.isdigit() for c in part) and \
        all(w[:1].isupper() or w.lower() in _NAME_JOINS for w in words) and words[-1].lower() not in _NAME_JOINS
