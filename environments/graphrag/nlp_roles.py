"""A person's role in an organisation, said without "of": "chief executive Jane Roe", "Jane Roe,
the chief executive,", "Jane Roe is its president", "a director at X", for the spaCy extractor
(:mod:`environments.graphrag.nlp_extract`). The person works for the organisation the role
belongs to: the one named after "at", else the last organisation named in the line before the
role, else the document's topic when it is no person seen, else the last organisation named. "former"/"ex-" or a past-tense
copula ("was its president") states no present fact, so nothing is read.
"""

from __future__ import annotations

from typing import Any

from environments.graphrag.nlp_lines import ROLE_LABELS
from environments.graphrag.nlp_names import Entity, State, organisation_shaped

ROLE_WORDS = ROLE_LABELS | {"chief scientist", "chief technology officer", "chief operating officer",
                            "co-chief executive", "co-chief executives", "chief executives", "managing directors",
                            "directors", "presidents", "head coach", "general manager", "executive director",
                            "chief economist"}
_LONGEST = sorted((tuple(r.replace("-", " - ").split()) for r in ROLE_WORDS), key=len, reverse=True)
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
        if any(t.lower_ in _PAST for t in doc[max(0, i - 3):i]) or (j < len(doc) and doc[j].lower_ == "of"):
            continue  # "the former president", "chief executive of X" (a cue of its own)
        people = _holders(doc, ents, i, j)
        if not people:
            continue
        at = [e for e in ents if j + 1 < len(doc) and doc[j].lower_ == "at" and e.start in (j + 1, j + 2)]
        before = [e for e in ents if e.end <= i and e.kind != "person" and e.name not in people and
                  (doc[e.start].ent_type_ == "ORG" or organisation_shaped(e.name))]
        topical = state.topic if state.topic and state.topic != state.last.get("person") and not any(
            e.kind == "person" and state.topic in e.name for e in ents) else ""  # "the Collison brothers"
        org = at[0].name if at else before[-1].name if before else topical or state.organisation
        if org and not any(e.name == org and e.kind == "person" for e in ents):
            out += [(p, "works_for", org, False) for p in people if p != org]
    return out


def _holders(doc: Any, ents: list[Entity], i: int, j: int) -> list[str]:
    """Who holds the role at doc[i:j]: the names right after it ("chief executives A and B"), or
    the name before it ("A, the chief executive", "A is its president", "A is chief executive")."""
    after = [e for e in ents if e.kind == "person" and e.start >= j]
    if after and after[0].start == j:
        chain = [after[0]]
        for e in after[1:]:
            if all(t.lower_ in (",", "and") for t in doc[chain[-1].end:e.start]):
                chain.append(e)
            else:
                break
        return [e.name for e in chain]
    persons = [e for e in ents if e.kind == "person" and e.end <= i]
    if not persons:
        return []
    gap = [t.lower_ for t in doc[persons[-1].end:i]]
    if gap in ([",", "the"], [",", "its"], [",", "our"], ["is"], ["is", "the"], ["is", "its"], ["is", "our"],
               ["is", "now"], ["is", "now", "the"], ["is", "now", "its"]):
        return [persons[-1].name]
    return []
