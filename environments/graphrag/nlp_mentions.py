"""Definite descriptions, for the spaCy extractor (:mod:`environments.graphrag.nlp_extract`): "the
orchestra", "the federation", "the airline's chief executive" refer back to the entity the text
described with that noun, as a reader resolves them (the "same head noun" rule of
coreference resolvers: Raghunathan et al., "A multi-pass sieve for coreference resolution",
EMNLP 2010; Lee et al., Computational Linguistics 2013):

- a name described by a noun: its copula's noun ("Tostan is a non-governmental organisation"),
  its apposition's noun ("Danfoss, the engineering group founded by ..."), or a word of its own
  name ("Equity Group Holdings": "the group");
- "the NOUN" (also "this NOUN") is the entity last described with that noun; with none, it is
  left to the extractor's other rules (the last organisation, the last person, the topic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from environments.graphrag.nlp_names import Entity, State, ent_at

DETERMINERS = {"the", "this", "that"}
# Nouns too general to name what they describe ("X is a part of Y", "one of the ...").
VAGUE = {"part", "one", "home", "member", "name", "number", "kind", "type", "place", "way", "lot", "example",
         "site", "seat", "capital", "city", "town", "country", "district", "village", "region", "area"}


def describe(doc: Any, ents: list[Entity], state: State) -> None:
    """Remember, in ``state.described``, the noun each name of the line is described by."""
    for e in ents:
        for noun in _nouns_of(doc, e, ents):
            word = noun.lemma_.lower()
            if word not in VAGUE and word.isalpha():
                state.described[word] = e.name


def _nouns_of(doc: Any, e: Entity, ents: list[Entity]) -> list[Any]:
    out = []
    for t in doc[e.start:e.end]:
        out += [c for c in t.children if c.dep_ == "appos" and c.pos_ == "NOUN" and not (e.start <= c.i < e.end)]
        if t.dep_ in ("nsubj", "nsubjpass") and t.head.lemma_ == "be":  # "X is a symphony orchestra"
            out += [c for c in t.head.children if c.dep_ == "attr" and c.pos_ == "NOUN"]
    if e.end + 1 < len(doc) and doc[e.end].text == "," and doc[e.end + 1].lower_ in ("the", "a", "an"):
        for t in doc[e.end + 2:e.end + 7]:  # "X, the Nairobi-based lender led by": the apposition's noun
            if t.is_punct and t.text != "-" or t.pos_ in ("VERB", "AUX", "ADP") and t.text != "-":
                break
            if t.pos_ == "NOUN" and t.dep_ not in ("compound", "amod") and ent_at(doc, t.i, ents) is None:
                if t.dep_ not in ("nsubj", "nsubjpass", "poss"):  # "X, the group's headquarters": no group  # "Headquartered in X, the company operates": a subject
                    out.append(t)
                break
    return out


def definite(token: Any, state: State, ents: Sequence[Entity] = ()) -> str:
    """The entity a definite noun phrase headed by ``token`` ("the orchestra", "this group")
    refers back to, or "" when no name before it (``ents``: the line's names) was described by
    its noun."""
    if token.pos_ != "NOUN" or not any(c.lower_ in DETERMINERS for c in token.children):
        return ""
    later = {e.name for e in ents if e.start > token.i} - {e.name for e in ents if e.start < token.i}
    word = token.lemma_.lower()
    if word in state.described and state.described[word] not in later:
        return state.described[word]
    return next((n for n in reversed(state.names) if n not in state.people and n not in later and
                 word in (w.lower() for w in n.split())), "")
