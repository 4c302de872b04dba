"""A person's role in an organisation, said without "of": "chief executive Jane Roe", "Jane Roe,
the chief executive,", "Jane Roe is its president", "a director at X", for the spaCy extractor
(:mod:`environments.graphrag.nlp_extract`). The person works for the organisation the role
belongs to: the one named after "at", else the last organisation named in the line before the
role, else the document's topic when it is no person seen, else the last organisation named. "former"/"ex-" or a past-tense
copula ("was its president") states no present fact, so nothing is read.
"""

from __future__ import annotations

from typing import Any

from environments.graphrag.nlp_coref import cue_heads
from environments.graphrag.nlp_lines import ROLE_LABELS, role_label
from environments.graphrag.nlp_mentions import definite
from environments.graphrag.nlp_names import Entity, State, conjuncts, organisation_shaped
from environments.graphrag.nlp_objects import plural

ROLE_WORDS = ROLE_LABELS | {"chief scientist", "chief technology officer", "chief operating officer",
                            "co-chief executive", "co-chief executives", "chief executives", "managing directors",
                            "directors", "presidents", "head coach", "general manager", "executive director",
                            "chief economist"}
_LONGEST = sorted((tuple(r.replace("-", " - ").split()) for r in ROLE_WORDS), key=len, reverse=True)
# What stands between a person and the role they hold ("A, the chief executive", "A has been
# president since 2024", "A, who is its director").
BEFORE_ROLE = {(",", "the"), (",", "its"), (",", "our"), ("is",), ("is", "the"), ("is", "its"), ("is", "our"),
               ("is", "now"), ("is", "now", "the"), ("is", "now", "its"), ("has", "been"), ("has", "been", "the"),
               ("remains",), ("remains", "the"), ("became",), ("serves", "as"), ("took", "over", "as"),
               (",", "who", "is"), (",", "who", "has", "been")}
# An appointment to a role states that the person holds it ("A was appointed chief executive in 2024",
# "A, who was named president"): its "was" is no past state of the role.
APPOINTED = {"appointed", "named", "elected", "promoted", "hired"}
BEFORE_ROLE |= {(*who, "was", verb, *to) for who in ((), (",", "who")) for verb in APPOINTED
                for to in ((), ("as",), ("to",), ("as", "its"), ("its",))}
PLACES = ("GPE", "LOC", "FAC")
_PAST = {"was", "were", "had", "former", "formerly", "ex", "previously", "once", "then"}


def _roles(doc: Any) -> list[tuple[int, int]]:
    """(start, end) of each role phrase in the line, longest first at each token."""
    low = [t.lower_ for t in doc]
    out, i = [], 0
    while i < len(doc):
        hit = next((w for w in _LONGEST if tuple(low[i:i + len(w)]) == w), None)
        if hit is None:
            i += 1
            continue
        out.append((i, i + len(hit)))
        i += len(hit)
    return out


def role_statements(doc: Any, ents: list[Entity], state: State) -> list[tuple[str, str, str, bool]]:
    """``(person, "works_for", organisation, False)`` for each role a line gives a person."""
    out = []
    for i, j in _roles(doc):
        if any(t.lower_ in _PAST for t in doc[max(0, i - 3):i]) and not _appointed(doc, i) or \
                (j < len(doc) and doc[j].lower_ == "of"):
            continue  # "the former president", "chief executive of X" (a cue of its own)
        people = _holders(doc, ents, i, j)
        if not people:
            continue
        at = [e for e in ents if j + 1 < len(doc) and doc[j].lower_ == "at" and e.start in (j + 1, j + 2)]
        before = [e for e in ents if e.end <= i and e.kind != "person" and e.name not in people and
                  (doc[e.start].ent_type_ == "ORG" or organisation_shaped(e.name))]
        topical = state.topic if state.topic and state.topic != state.last.get("person") and not any(
            e.kind == "person" and state.topic in e.name for e in ents) else ""  # "the Collison brothers"
        owner = _owner(doc, ents, state, i)  # "its chief executive", "the airline's chief executive"
        if _owned(doc, i) and not owner:  # an owner phrase this cannot resolve: the page's subject, else none
            owner = state.topic if state.topic not in state.people else ""
            if not owner:
                continue
        org = at[0].name if at else owner or (before[-1].name if before else topical or state.organisation)
        if org and not any(e.name == org and e.kind == "person" for e in ents):
            out += [(p, "works_for", org, False) for p in people if p != org]
    return out


def label_roles(key: str, values: list[Entity], topic: str, fields: dict[str, str],
                former: bool) -> list[tuple[str, str, str, bool]] | None:
    """A field line whose label (``key``, lower case) names a role: "Chief executive: Jane Roe",
    "Founder and president: A", "Key players: A; B". Each holder (every name of a plural label)
    works for the sheet's subject ``topic``; a founder's part of the label says ``topic`` was
    founded by the first. None when the label names no role, or no value or subject is known."""
    role, others = role_label(key)
    if not role or not values or not topic:
        return None
    held = [e for e in values if e.kind != "thing"] if plural(key) else values[:1]
    return [(e.name, "works_for", topic, former) for e in held or values[:1]] + [
        (topic, fields[o], values[0].name, former) for o in others if fields.get(o) == "founded_by"]


def _appointed(doc: Any, i: int) -> bool:
    """The role at token ``i`` follows an appointment ("was appointed (as) chief executive") and no
    word of a former state ("the former president was appointed ...")."""
    k = i - 1
    while k > 0 and doc[k].lower_ in ("as", "to", "its"):
        k -= 1
    return k > 0 and doc[k].lower_ in APPOINTED and doc[k - 1].lower_ in ("was", "were") and \
        not any(t.lower_ in _PAST - {"was", "were"} for t in doc[max(0, k - 3):i])


def _holders(doc: Any, ents: list[Entity], i: int, j: int) -> list[str]:
    """Who holds the role at doc[i:j]: the names right after it ("chief executives A and B"), or
    the name before it ("A, the chief executive", "A is its president", "A is chief executive")."""
    after = [e for e in ents if _holder_like(doc, e) and e.start >= j]
    if after and tuple(t.lower_ for t in doc[j:after[0].start]) in (("is",), ("has", "been")) and _owned(doc, i):
        return [after[0].name]  # "its general director has been Jorge Telerman", "whose chief executive is X"
    if after and after[0].start == j + 1 and doc[j].text == "," and after[0].end < len(doc) and \
            doc[after[0].end].text == "," and j - i >= 1 and _owned(doc, i):
        return [after[0].name]  # "Its chief executive, Miles Hurrell, works ...": the apposed name
    if after and after[0].start == j:
        chain = [after[0]]
        for e in after[1:]:
            if all(t.lower_ in (",", "and") for t in doc[chain[-1].end:e.start]):
                chain.append(e)
            else:
                break
        return [e.name for e in chain]
    persons = [e for e in ents if _holder_like(doc, e) and e.end <= i]
    if not persons:
        return []
    start = _owner_start(doc, i)  # "X, the airline's chief executive": the gap before the owner
    gap = tuple(t.lower_ for t in doc[persons[-1].end:start])
    return [persons[-1].name] if gap in BEFORE_ROLE or (gap == (",",) and start < i) else []


def _holder_like(doc: Any, e: Entity) -> bool:
    """A name that can hold a role: a person's, or one whose tagger's label is unsure (the small
    pipeline often tags an unfamiliar person "ORG": "Choi Soo-yeon has been chief executive") and
    that has no organisation's or place's shape."""
    return e.kind == "person" or (not organisation_shaped(e.name) and doc[e.start].ent_type_ not in PLACES
                                  and len(e.name.split()) >= 2)


def _owner_start(doc: Any, i: int) -> int:
    """Where the owner phrase before a role starts ("its artistic", "the airline's", "Allegro's"),
    or ``i`` for none."""
    k = i - 1
    while k >= 0 and doc[k].pos_ == "ADJ":
        k -= 1
    if k >= 0 and doc[k].lower_ in ("its", "their", "whose"):
        return k
    if k >= 1 and doc[k].lower_ in ("'s", "\u2019s"):
        k -= 1
        while k > 0 and doc[k - 1].pos_ == "PROPN" and doc[k].pos_ == "PROPN":
            k -= 1
        return k - 1 if k >= 1 and doc[k - 1].lower_ in ("the", "this") else k
    return i


def _owned(doc: Any, i: int) -> bool:
    return _owner_start(doc, i) < i


def _owner(doc: Any, ents: list[Entity], state: State, i: int) -> str:
    """The organisation an owner phrase before the role names: "its" (the last organisation
    named, else the topic), "Allegro's", "the airline's" (the entity described as an airline)."""
    k = _owner_start(doc, i)
    if k == i:
        return ""
    if doc[k].lower_ == "whose":  # "Raspberry Pi Ltd, a subsidiary whose chief executive is X": the antecedent
        return _antecedent(doc, k, ents, state)
    if doc[k].lower_ in ("its", "their"):  # the page's subject when it is no person, else the last organisation
        return state.topic if state.topic and state.topic not in state.people else \
            state.organisation or state.last.get("thing", "")
    named = next((e for e in ents if e.start <= k < e.end), None)
    if named is not None:
        return named.name if named.kind != "person" else ""
    noun = next((t for t in doc[k:i] if t.pos_ == "NOUN"), None)
    return definite(noun, state, ents) if noun is not None else ""


def _antecedent(doc: Any, k: int, ents: list[Entity], state: State) -> str:
    """What a relative clause opened by "whose" (token ``k``) is about: the noun or name it
    modifies in the parse ("X, which ... and whose president": X), a name's appositive noun
    ("X, a subsidiary whose ...": X)."""
    t = doc[k]
    for _ in range(8):
        if t.dep_ == "relcl" or t.head.i == t.i:
            break
        t = t.head
    if t.dep_ != "relcl":
        return ""
    head = t.head
    named = next((e for e in ents if e.start <= head.i < e.end), None)
    if named is None and head.dep_ == "appos":  # "Raspberry Pi Ltd, a commercial subsidiary whose"
        named = next((e for e in ents if e.start <= head.head.i < e.end), None)
    if named is not None:
        return named.name if named.kind != "person" and doc[named.start].ent_type_ not in PLACES else ""
    return definite(head, state, ents) if head.pos_ == "NOUN" else ""


LEAD_VERBS = {"lead", "head", "run", "direct", "chair", "manage", "coach", "helm", "captain", "preside"}


def led_by(doc: Any, ents: list[Entity], state: State) -> list[tuple[str, str, str, bool]]:
    """"X is directed by A", "X has been led since 1992 by A", "X, run by chief executive A": a
    passive verb of leading whose agent names a person says the person works for the verb's
    subject (the climb of :func:`~environments.graphrag.nlp_coref.cue_heads`), when that is no
    person or place (a stadium is "run by" its club's president). A past auxiliary
    ("was led by") or a negation states no present fact."""
    out = []
    for t in doc:
        agent = next((c for c in t.children if c.dep_ == "agent"), None)
        if t.lemma_ not in LEAD_VERBS or t.tag_ != "VBN" or agent is None:
            continue
        if any(c.dep_ == "neg" or (c.dep_ in ("aux", "auxpass") and c.lower_ in _PAST) for c in t.children):
            continue
        first = next((e for e in ents if agent.i < e.start <= agent.right_edge.i and e.kind == "person"), None)
        if first is None or any(w.text in ",;" for w in doc[agent.i:first.start]):
            continue
        people = [first.name, *conjuncts(doc, doc[first.end - 1], ents)]
        orgs = [h for h in cue_heads(doc, t.i, ents, state) if h not in state.people and not any(
            e.name == h and (e.kind == "person" or doc[e.start].ent_type_ in PLACES) for e in ents)]
        out += [(p, "works_for", h, False) for h in orgs for p in people if p != h]
    return out
