"""A cue's objects, for the spaCy extractor (:mod:`environments.graphrag.nlp_extract`): the names
after a cue in its clause, split over "and", "or" and list commas; a comma without a list is a
qualifier ("Austin, Texas": ``located_in``); "not" before a name negates it; "there" is the last
place named."""

from __future__ import annotations

from typing import Any

from environments.graphrag.nlp_coref import last_organisation
from environments.graphrag.nlp_mentions import definite
from environments.graphrag.nlp_names import NEGATORS, Entity, State, negated_before

LIST_JOIN = {",", "and", "or", "&", ";"}
LIST_WORDS = {"as", "well", "also", "both", "either", "then", "later", "the", "finally"}
COMPOUND_SEATS = {"based", "headquartered"}


def plural(label: str) -> bool:
    """A field label naming several values ("Founders", "Major offices"): commas in its value list."""
    last = label.split()[-1] if label.split() else ""
    return last.endswith("s") and not last.endswith("ss") and last not in ("headquarters", "its", "his")


def objects_after(doc: Any, j: int, ents: list[Entity], school_only: bool, field: bool = False,
             state: State | None = None, cue: str = "", listing: bool = False) -> list[tuple[str, bool]]:
    """The names after a cue in its clause: the first within a few words, then those a list joins
    on (repeating the cue's preposition: "at A, at B and at C"). A comma with no "and"/"or" in the
    list is a qualifier, not a second object. "there" is the last place named."""
    if state is not None and j < len(doc) and doc[j].lower_ == "there":  # the last place named before it
        near = [e.name for e in ents if e.end <= j and doc[e.start].ent_type_ in ("GPE", "LOC")]
        place = near[-1] if near else state.place
        return [(place, negated_before(doc, j))] if place else []
    if state is not None and j < len(doc) and doc[j].lower_ in ("his", "hers", "him", "her") and (
            j + 1 == len(doc) or doc[j + 1].is_punct):  # "a colleague of hers"
        who = state.last.get("person") or state.topic
        return [(who, False)] if who else []
    if state is not None and j + 1 < len(doc) and doc[j].lower_ in ("the", "this"):  # "works for the institute"
        noun = next((t for t in doc[j + 1:j + 4] if t.pos_ in ("NOUN", "PROPN")), None)
        who = definite(noun, state, ents) if noun is not None and noun.pos_ == "NOUN" else ""
        if who:
            return [(who, negated_before(doc, j))]
    after = [e for e in ents if e.start >= j]
    if not after:
        return []
    first = after[0]
    if len(after) > 1 and first.end < len(doc) and doc[first.end].lower_ in ("'s", "\u2019s") \
            and after[1].start == first.end + 1:
        first = after[1]  # "with Italy's Leonardo": the possessed name
    if first.end + 1 < len(doc) and doc[first.end].text == "-" and doc[first.end + 1].lower_ in COMPOUND_SEATS:
        org = last_organisation(doc, j, ents, state)  # "joined the Veldhoven-based company": that company
        return [(org, False)] if org and org != first.name else []
    gap = doc[j:first.start]
    if len(gap) > 4 or any(t.text in ".;:!?" or t.lower_ in ("and", "but", "while", "where", "who", "which")
                           for t in gap):
        return []
    if school_only and not any(w in first.name.lower() for w in ("university", "college", "school", "institute")):
        return []
    chain = [first]
    for e in after[1:]:
        between = [t.lower_ for t in doc[chain[-1].end:e.start]]
        if not between or not all(w in LIST_JOIN | NEGATORS | LIST_WORDS | {cue} for w in between):
            break
        if between == ["and"] and " of " in chain[-1].name and e.end - e.start == 1 and \
                doc[e.start].ent_type_ not in ("GPE", "LOC", "PERSON"):  # "the Academy of Arts and Sciences"
            chain[-1] = Entity(f"{chain[-1].name} and {e.name}", chain[-1].kind, chain[-1].start, e.end)
            continue
        chain.append(e)
    listed = any(w in ("and", "or", "&") for a, b in zip(chain, chain[1:], strict=False)
                 for w in (t.lower_ for t in doc[a.end:b.start]))
    if not listed and not listing and not (field and any(t.text == ";" for t in doc[j:])):
        chain = chain[:1]
    return [(e.name, negated_before(doc, e.start)) for e in chain]


def qualifiers(doc: Any, j: int, ents: list[Entity], place: bool = False) -> list[tuple[str, str, str, bool]]:
    """"in Austin, Texas", "Born: Kapsisiywa, Nandi County, Kenya": each place of a comma chain is
    in the next, unless "and" or "or" goes on after the chain (then it is a list). ``place``: the
    cue's object is a place whatever the tagger's label of its name (a place relation's)."""
    after = [e for e in ents if e.start >= j]
    if len(after) < 2 or len(doc[j:after[0].start]) > 2 or \
            not (place or doc[after[0].start].ent_type_ in ("GPE", "LOC", "")):
        return []
    chain = [after[0]]
    for e in after[1:]:
        if [t.text for t in doc[chain[-1].end:e.start]] not in ([","], [",", "in"]) or \
                doc[e.start].ent_type_ not in ("GPE", "LOC"):
            break
        chain.append(e)
    next_word = doc[chain[-1].end].lower_ if chain[-1].end < len(doc) else "."
    next_word = doc[chain[-1].end + 1].lower_ if next_word == "," and chain[-1].end + 1 < len(doc) else next_word
    if len(chain) < 2 or next_word in ("and", "or"):
        return []
    return [(a.name, "located_in", b.name, False) for a, b in zip(chain, chain[1:], strict=False)]
