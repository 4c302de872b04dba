"""The rule-based extractor's sentence items (names, pronouns, cues, boundaries), what their
references resolve to, and the helpers that read objects, speakers and subject-less predicates
from them (:mod:`environments.graphrag.lexicon`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from environments.graphrag.lexicon_forms import (
    AUXILIARIES,
    CLAUSE_BREAKS,
    CONJUNCTIONS,
    GENERIC_NAME_WORDS,
    SPEECH,
    SUBORDINATORS,
)
from environments.graphrag.lexicon_types import SCHOOL, kind

# Words before a name that make it a landmark or a companion ("near X", "studied under X").
NEAR = {"near", "outside", "beyond", "under", "with", "alongside", "nearby", "toward", "towards", "than"}
COMPASS = {"north", "south", "east", "west", "north-east", "north-west", "south-east", "south-west",
           "northeast", "northwest", "southeast", "southwest", "northern", "southern", "eastern", "western"}
AWAY = {"across", "away", "outskirts", "edge", "miles", "kilometres", "kilometers", "km", "hour", "drive"}

AFFIX = re.compile(r"^(.+?)(-born|-based|-headquartered)$")
DASHES = {"-", "\u2013", "\u2014"}
LOCATIVE = {"born_in", "lives_in", "located_in", "citizen_of", "headquartered_in", "office_in"}


@dataclass(frozen=True)
class Cue:
    relation: str
    kind: str  # verb | inverse | noun | negative | field | post | pre | appos | mate (lexicon_forms)


@dataclass
class Item:
    kind: str  # ent | pron | there | ppos | cue | word | bound | poss | neg
    text: str
    entity: str = ""
    cue: Cue | None = None


@dataclass
class Context:
    """What a sentence's references resolve to: the subject so far and the last place named."""

    fallback: str  # what a pronoun names: the page's subject, else the last subject
    topic: str = ""  # what a field or a subject-less predicate is about (the fallback, else the first name)
    place: str = ""
    follow: bool = False  # no page: a pronoun is the last subject, even within a sentence
    aside: set[tuple[str, str]] = field(default_factory=set)  # appositions, which move no subject
    places: set[str] = field(default_factory=set)  # objects of locative relations, never a "who"
    untitled: bool = False  # a user's paragraph: the rules for other writers' prose apply
    qualified: list[tuple[str, str]] = field(default_factory=list)  # "Austin, Texas": (Austin, Texas)


def resolve(item: Item, context: Context) -> str:
    """What a name, pronoun or "there" names."""
    if item.kind == "there":
        return context.place
    if item.kind == "pron" and item.text == "i":
        return context.topic
    return item.entity if item.kind == "ent" else context.fallback


def objects(after: list[Item], context: Context) -> list[str]:
    """The objects after a cue: every name (or pronoun, or "there") in the segment, except that
    where the segment has no "and", "or" or ";", a name right after a name and a comma is a
    qualifier of the first ("Austin, Texas"; "Born: Mobile, Alabama"), not another object."""
    stops = [n for n, it in enumerate(after) if (it.kind == "bound" and it.text == "-")
             or (it.kind == "word" and it.text in CLAUSE_BREAKS)]
    after = after[:stops[0]] if stops else after  # a dash or "but" ends the objects
    joined = any(it.text in CONJUNCTIONS for it in after if it.kind in ("bound", "word"))
    out: list[str] = []
    depth = 0
    for n, it in enumerate(after):
        if it.kind == "bound" and it.text in ("(", ")"):
            depth = max(0, depth + (1 if it.text == "(" else -1))
        if it.kind not in ("ent", "pron", "there") or depth or (it.kind == "pron" and it.text == "i"):
            continue
        qualifier = not joined and n >= 2 and after[n - 1].text == "," and after[n - 2].kind == "ent"
        if qualifier and context.untitled:
            context.qualified.append((after[n - 2].entity, it.entity))
        elif not qualifier and not (context.untitled and landmark(after[:n])):
            out.append(resolve(it, context))
    return out


def sited(items: list[Item]) -> list[tuple[str, str]]:
    """"studied at the University of X in Y": a school's name right before "in" and a place names
    where the school is (located_in)."""
    return [(items[n].entity, items[n + 2].entity) for n in range(len(items) - 2)
            if items[n].kind == "ent" and items[n + 1].kind == "word" and items[n + 1].text == "in"
            and items[n + 2].kind == "ent" and kind(items[n].entity) == SCHOOL and kind(items[n + 2].entity) != SCHOOL]


def landmark(before: list[Item]) -> bool:
    """A name the words before it make a landmark or a companion, not an object: "near X", "just
    outside X", "north of X", "across the bay from X", "under X", "with X"."""
    words = [it.text for it in before[-4:] if it.kind == "word" and it.text not in ("the", "a", "an")]
    if not words or before[-1].kind not in ("word",):
        return False
    last = words[-1]
    if last in NEAR:
        return True
    return last in ("of", "from") and any(w in COMPASS or w in AWAY for w in words[:-1])


def listed(after: list[Item], context: Context) -> list[str]:
    """A field's value: its first name, and more only after a list separator ("Education: X (B.S.);
    Y (MBA)" is X and Y)."""
    out: list[str] = []
    for n, it in enumerate(after):
        if it.kind in ("ent", "pron", "there") and (not out or after[n - 1].text in (",", ";", "and", "or")):
            out.append(resolve(it, context))
    return [o for o in out if o]


def generic_prefix(full: list[str], words: set[str]) -> bool:
    """"Vienna" is not short for "University of Vienna": the name adds only generic words, before."""
    rest = set(full) - words
    return bool(rest) and rest <= GENERIC_NAME_WORDS and full[0] in rest


def subordinate(before: list[Item]) -> bool:
    """A subordinate clause with its own subject before the cue ("X began in 2003 when Y founded it")."""
    return any(it.kind == "word" and it.text in SUBORDINATORS for it in before)


def speaker(items: list[Item]) -> str:
    """The speaker of a quoted first-person sentence ("'I was born in X,' says Y")."""
    if not any(it.kind == "pron" and it.text == "i" for it in items):
        return ""
    for n, it in enumerate(items[:-1]):
        if it.kind == "word" and it.text in SPEECH and items[n + 1].kind == "ent":
            return items[n + 1].entity
        if it.kind == "ent" and items[n + 1].kind == "word" and items[n + 1].text in SPEECH:
            return it.entity
    return ""


def predicate(before: list[Item], cue: Cue) -> bool:
    """Nothing before the cue names its subject, which is then the sentence's topic: nothing at
    all, a field's colon, or words alone ("The company is based in"); a relational noun only as
    a predicate ("is headquartered in", not "The birthplace of")."""
    if not before or before[-1].text == ":":
        return cue.kind in ("verb", "negative", "noun")
    if not all(it.kind in ("word", "bound") for it in before):
        return False
    return cue.kind in ("verb", "negative") or (cue.kind == "noun" and before[-1].text in AUXILIARIES)


def passive(after: list[Item], untitled: bool = False) -> bool:
    """"founded in 1976 by X": an inverse cue followed by "by" before any name reads as passive (in
    a user's paragraph, also after a place: "founded in Paris in 1971 by X")."""
    for n, it in enumerate(after):
        if it.kind in ("ent", "pron") and not (untitled and n and after[n - 1].text == "in"):
            return False
        if it.text == "by":
            return True
    return False


def place(head: str, relation: str, tail: str) -> str:
    """The place a statement names, for a later "there"."""
    if relation == "located_in":
        return head
    return tail if relation in ("born_in", "lives_in", "headquartered_in", "office_in") else ""


def join(span: list[str]) -> str:
    """A name's tokens as text: no space before a comma ("Washington, D.C.")."""
    return " ".join(span).replace(" ,", ",")


def split_affixes(tokens: list[str]) -> list[str]:
    """"Paris-born" as "Paris" and "-born" (a cue whose object stands before it)."""
    out: list[str] = []
    for t in tokens:
        m = AFFIX.match(t)
        out += [m.group(1), m.group(2)] if m and t[:1].isupper() else [t]
    return out


def without_header(tokens: list[str]) -> list[str]:
    """A capitalised dateline or kicker before a dash or colon ("PRESS RELEASE - ...") is dropped."""
    if tokens and len(tokens[0]) > 1 and tokens[0].isalpha() and tokens[0].isupper():
        for k, t in enumerate(tokens[:6]):
            if t in DASHES:
                return tokens[k + 1:]
    return tokens
