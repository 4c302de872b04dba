"""Links between two organisations or two people, for the spaCy extractor
(:mod:`environments.graphrag.nlp_extract`): membership, a part of or owned by a group, a subsidiary
or an alliance (``affiliated_with``; "part of" is the shared tables' ``located_in`` cue, read as
``affiliated_with`` unless either end is a place); codeshares, joint businesses and joint ventures
(``partners_with``); working closely, side by side, alongside or together (``colleague_of``).

Each cue phrase is read by the extractor's dependency climb like any other; what this module adds
is when such a cue states nothing:

- a link held in the past or planned ("was part of", "had been owned by", "will join", "plans to
  become a member of"): the schema states present links. A deal that was signed or extended
  ("extended its codeshare with X") is a present partnership and stays;
- "owns a stake in X", "controls 20 percent of X": a holding, not a group's member;
- "founded X together with Y": "together with" is a colleague only beside a verb of working in the
  present ("runs the company together with his brother Y").

A parse rule reads "A and B ..., who still work together" and "A and B run it together": each
pair of the people the verb's subject coordinates is ``colleague_of``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from environments.graphrag.nlp_names import Entity, State, conjuncts, ent_at, organisation_shaped

LINK_CUES: dict[str, tuple[tuple[str, str], ...]] = {
    "affiliated_with": (("member of", "verb"), ("members of", "verb"), ("belongs to", "verb"), ("owned by", "verb"), ("owns", "inverse"), ("controls", "inverse"),
                        ("subsidiary of", "verb"), ("arm of", "verb"), ("segment of", "verb"),
                        ("division of", "verb"), ("on the board of", "verb"), ("trustee of", "verb"),
                        ("fellow of", "verb")),
    "partners_with": (("codeshare with", "verb"), ("codeshare agreement with", "verb"),
                      ("codeshare agreements with", "verb"), ("codeshare partnership with", "verb"),
                      ("joint business with", "verb"), ("joint venture between", "verb")),
    "colleague_of": (("works closely with", "verb"), ("working closely with", "verb"),
                     ("works side by side with", "verb"), ("side by side with", "verb"), ("plays alongside", "verb"),
                     ("together with", "verb"), ("teammate", "mate"), ("collaborator", "mate")),
}
# Field labels ("Network membership: X", "Club teammates include: A; B"); a label's last words are
# tried too, so "Alliance membership" reads as "membership".
LINK_FIELDS = {"membership": "affiliated_with", "alliance membership": "affiliated_with",
               "network membership": "affiliated_with", "league membership": "affiliated_with", "memberships": "affiliated_with", "alliance": "affiliated_with",
               "alliances": "affiliated_with", "parent company": "affiliated_with", "board roles": "affiliated_with",
               "teammates": "colleague_of", "teammates include": "colleague_of", "co-authors": "colleague_of",
               "collaborators": "colleague_of", "codeshare partners": "partners_with",
               "joint venture partners": "partners_with"}
PARTNER_WORDS = {"partner", "partners", "partnership", "partnerships", "codeshare"}


def label_relation(label: str, relations: Sequence[str]) -> str:
    """The relation a field label no table holds states by its words: "Partner institutions",
    "Joint venture partner in China", "Joint venture" (``partners_with``); "" for none."""
    words = label.replace("-", " ").split()
    if "partners_with" in relations and (PARTNER_WORDS & set(words) or "joint venture" in " ".join(words)):
        return "partners_with"
    return ""


HOLDING = {"stake", "stakes", "share", "shares", "interest", "percent", "%", "majority", "minority", "per"}
PLANS = {"plan", "agree", "intend", "aim", "seek", "hope", "expect", "want", "propose", "consider"}
WORK_VERBS = {"work", "run", "lead", "manage", "direct", "play", "head", "teach", "perform", "coach", "practise",
              "practice", "operate"}
_RELATIVE = {"who", "which", "that"}
PART_OF = ("part", "of")
PLACES = ("GPE", "LOC")
LINKS = {"affiliated_with", "partners_with"}  # between organisations (a person may be a member)
_PAST = {"was", "were", "had"}


def link_cue(words: tuple[str, ...]) -> bool:
    return words == PART_OF or any((" ".join(words), kind) in table for table in LINK_CUES.values()
                                   for kind in ("verb", "inverse", "mate"))


def linkable(doc: Any, ents: list[Entity], state: State, head: str, tail: str) -> bool:
    """Neither end is a place by its tag in the line, and the tail is no person (a person may be
    a member, never a group); a name the line does not hold ("the group" read back) passes."""
    def tagged(name: str, person: bool) -> bool:
        return any(e.name == name and (doc[e.start].ent_type_ in PLACES or person and e.kind == "person") for e in ents)
    return not tagged(head, False) and not tagged(tail, True) and tail not in state.people


def part_of(doc: Any, ents: list[Entity], state: State,
            out: list[tuple[str, str, str, bool]]) -> list[tuple[str, str, str, bool]]:
    """"X is part of Y" (the shared tables' ``located_in`` cue): a unit of a group
    (``affiliated_with``) when Y is tagged or shaped as an organisation and neither end is a place."""
    def group(t: str) -> bool:
        return organisation_shaped(t) or any(e.name == t and doc[e.start].ent_type_ == "ORG" for e in ents)
    return [(h, "affiliated_with" if group(t) and linkable(doc, ents, state, h, t) else r, t, n) for h, r, t, n in out]


def link_holds(doc: Any, i: int, j: int) -> bool:
    """Whether the link cue at doc[i:j] states a present link (see the module's docstring)."""
    verb = doc[i]
    for _ in range(6):
        if verb.pos_ in ("VERB", "AUX") or verb.head.i == verb.i:
            break
        verb = verb.head
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
    if verb.lower_ in _PAST or any(a.lower_ in _PAST for a in auxes):
        return False  # "was a member of", "had been owned by"
    if any(a.lower_ in ("will", "would", "shall") for a in auxes) or verb.head.lemma_ in PLANS:
        return False  # "will join", "plans to become part of"
    words = [t.lower_ for t in doc[i:j]]
    if words[0] in ("owns", "controls") and any(t.lower_ in HOLDING for t in doc[j:j + 4]):
        return False  # "owns a stake in X"
    if words[0] in ("teammate", "teammates", "collaborator", "collaborators") and j < len(doc) and \
            doc[j].lower_ in ("at", "in", "for"):
        return False  # "we are teammates at LAFC": the club is no colleague
    if words == ["together", "with"]:
        verb = doc[i].head.head if doc[i].head.dep_ == "prep" else doc[i].head  # "together" may hang on "with"
        return verb.lemma_ in WORK_VERBS and verb.tag_ in ("VBZ", "VBP", "VBG")
    return True


def together(doc: Any, ents: list[Entity], state: State) -> list[tuple[str, str, str, bool]]:
    """"A and B, who still work together", "A and B run the studio together": each pair of the
    people the verb's subject coordinates is ``colleague_of``."""
    out: list[tuple[str, str, str, bool]] = []
    for t in doc:
        verb = t.head
        if t.lower_ != "together" or verb.lemma_ not in WORK_VERBS or verb.tag_ not in ("VBZ", "VBP", "VBG"):
            continue
        if t.i + 1 < len(doc) and doc[t.i + 1].lower_ == "with" or any(c.dep_ == "neg" for c in verb.children):
            continue  # "together with Y": the cue's
        while verb.dep_ == "conj" and not any(c.dep_ == "nsubj" for c in verb.children):
            verb = verb.head  # "who set it up in 1988 and still lead it together"
        subject = next((c for c in verb.children if c.dep_ == "nsubj"), None)
        if subject is None:
            continue
        anchor = subject
        if subject.lower_ in _RELATIVE:  # "A and B, who ...": the name before the comma, whatever the parse
            anchor = doc[subject.i - 2] if subject.i >= 2 and doc[subject.i - 1].text == "," else verb.head
        named = ent_at(doc, anchor.i, ents)
        if named is None:
            continue
        people = [n for n in dict.fromkeys([named.name, *conjuncts(doc, anchor, ents)])
                  if n in state.people or any(e.name == n and e.kind == "person" for e in ents)]
        out += [(a, "colleague_of", b, False) for k, a in enumerate(people) for b in people[k + 1:]]
    return out


def pair_between(objects: list[tuple[str, bool]], rel: str) -> list[tuple[str, str, str, bool]]:
    """"the joint venture between A and B": A partners with B."""
    return [(objects[0][0], rel, objects[1][0], objects[0][1] or objects[1][1])] if len(objects) > 1 else []


GROUP_NOUNS = {"group", "team", "consortium", "circle", "coalition", "band", "number"}
_MEMBERS = {"included", "including", "includes", "among"}


def members(doc: Any, j: int) -> int:
    """Where a founding group's named members start: "founded by a small group of activists that
    included A, B and C", "by a group of investors including A", "by a group of intellectuals led
    by A" (the token after "included", "including" or "led by"); ``j`` itself when the agent is no
    group noun."""
    noun = next((t for t in doc[j:j + 4] if t.pos_ == "NOUN"), None)
    if noun is None or noun.lower_ not in GROUP_NOUNS:
        return j
    for t in doc[noun.i + 1:min(noun.i + 12, noun.sent.end)]:
        if t.lower_ in _MEMBERS:
            return t.i + 1 + (t.i + 1 < len(doc) and doc[t.i + 1].lower_ == "them")
        if t.lower_ == "led" and t.i + 1 < len(doc) and doc[t.i + 1].lower_ == "by":
            return t.i + 2
        if t.text in ".;:" or t.ent_type_ == "PERSON":
            break
    return j


def co_founders(doc: Any, i: int, ents: list[Entity],
                objects: list[tuple[str, bool]]) -> tuple[list[tuple[str, bool]], list[str]]:
    """"A founded X with B and C", "co-founded the company in 1980 with B": the people named in a
    "with" phrase of the founding verb at ``i`` founded X too. Returns the verb's objects outside
    that phrase (a name in it is a founder, never the organisation founded) and the co-founders,
    none when no object is left but a place."""
    verb = {i, i - 1, i - 2} if i >= 2 and doc[i - 1].text == "-" and doc[i - 2].lower_ == "co" else {i}
    spans = [(t.left_edge.i, t.right_edge.i + 1) for t in doc[doc[i].sent.start:doc[i].sent.end]
             if t.dep_ == "prep" and t.lower_ == "with" and t.head.i in verb]  # "co-" parsed apart: "together with B, she co-founded"
    inside = [e for e in ents if any(s <= e.start and e.end <= end for s, end in spans)]
    kept = [(t, n) for t, n in objects if not any(e.name == t for e in inside)]
    def placed(name: str) -> bool:  # "co-founded the Santa Clara, California-based chipmaker", "founded there"
        at = next((e for e in ents if e.name == name), None)
        if at is None:
            return i + 1 < len(doc) and doc[i + 1].lower_ == "there"
        return doc[at.start].ent_type_ in ("GPE", "LOC") and at.end < len(doc) and doc[at.end].text in (",", "-")

    return kept, [e.name for e in inside if e.kind == "person"] if any(not placed(t) for t, _ in kept) else []
