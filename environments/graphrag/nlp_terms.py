"""Defined terms and a page's title, for the spaCy extractor (:mod:`environments.graphrag.nlp_extract`).

- **Defined terms.** Legal and annual-report prose names an entity once in full and defines the
  words it will use for it after: ``Vale S.A. ("Vale" or the "Company")``, ``Landsbankinn hf.
  (the "Bank")``, ``(hereinafter "the Group")``. A definition is a parenthesis right after a name
  holding quoted words: a quoted name is the entity's short name, kept as written wherever it is
  used; a quoted common noun after "the" is a term, which from then on means the short name if
  the definition gave one, else the full name. The quoted words themselves are the full name (the
  sentence that defines them states its facts of the full name). A
  capitalised term no definition introduced ("the Company" in a text that never defined it) is no
  name: it is the entity last described by that noun
  (:mod:`~environments.graphrag.nlp_mentions`), else nothing. This is how a reader of such texts
  resolves them; coreference resolvers treat a defined alias as the mention it is apposed to
  (Lee et al., "Deterministic coreference resolution based on entity-centric, precision-ranked
  rules", Computational Linguistics 2013, the appositive and acronym passes). So is an acronym
  in a parenthesis after a name, made of its initials: "World Trade Organization (WTO)" makes a
  later "WTO" the full name (a short name that is no acronym, "(Embrapa)", stays as written). A
  single name in a parenthesis after an organisation's, no place, is that organisation as written
  in another language ("Mobile World Investment Corporation (Thế Giới Di Động)").
- **A report's heading is no name.** A title in parts, split at a colon or a spaced dash, whose
  reading as a name the text never repeats ("Tüpraş Annual Report: Corporate Structure",
  "Landsbankinn hf. – Annual Report 2025") gives the part the text names, or the longest run of
  a part's leading words its first sentence names ("Tüpraş"); a title of one part stays the
  subject (a fact sheet's "Xero" is rarely repeated in its fields), but for a company word the
  text's first sentence leaves off ("Pfizer Inc.", "Carlsberg Group": Pfizer, Carlsberg).
"""

from __future__ import annotations

import re
from typing import Any

from environments.graphrag.nlp_names import Entity, State, organisation_shaped

QUOTES = {'"', "\u201c", "\u201d", "\u201e", "'", "\u2018", "\u2019"}
# Nouns a text defines as its term for an entity: capitalised after "the", they are no name.
TERMS = {"company", "group", "bank", "organisation", "organization", "contractor", "employer", "issuer",
         "project", "corporation", "society", "fund", "foundation", "institute", "university", "agency",
         "authority", "association", "firm", "partnership", "trust", "operator", "borrower", "lender",
         "guarantor", "seller", "buyer", "purchaser", "parent", "subsidiary", "entity", "holding", "club",
         "federation", "museum", "council", "board", "ministry", "government", "state", "municipality",
         "city", "region", "client", "customer", "supplier", "licensor", "licensee", "manager", "trustee"}
_PARTS = re.compile(r"\s*(?::\s|\s[-\u2013\u2014|]\s)\s*")


def define(doc: Any, ents: list[Entity], state: State) -> list[Entity]:
    """The line's names with its definitions read (``state.defined``), the quoted words of a
    definition dropped and every defined or undefined term resolved (see the module docstring)."""
    hidden: dict[int, str] = {}  # a definition's token -> the name it defines
    opening = next((t.i for t in doc[:12] if t.text == "("), None)
    shut = next((t.i for t in doc[opening:opening + 20] if t.text == ")"), None) if opening else None
    if opening and shut and _quoted(doc, opening + 1, shut) and doc[0].text[:1].isupper() and \
            not any(t.pos_ in ("VERB", "AUX") for t in doc[:opening]) \
            and not any(e.start == 0 and e.end == opening for e in ents):  # a line opening with its
        ents = [e for e in ents if e.start >= opening]  # definition: its name is all before the parenthesis
        ents.insert(0, Entity(doc[:opening].text.strip(), "thing", 0, opening))  # ("Člověk v tísni, o.p.s.")
    for e in ents:
        if e.end >= len(doc) or doc[e.end].text != "(":
            continue
        close = next((t.i for t in doc[e.end + 1:e.end + 20] if t.text == ")"), None)
        quoted = _quoted(doc, e.end + 1, close) if close is not None else []
        inner = doc[e.end + 1:close].text.strip() if close is not None else ""
        if not quoted and acronym(inner, e.name):  # "World Trade Organization (WTO)": a later "WTO" is it
            state.defined[inner.lower()] = e.name
            hidden.update({k: e.name for k in range(e.end, close + 1)})  # type: ignore[operator]
        elif not quoted and close is not None and _alternate(doc, ents, e, close):
            hidden.update({k: e.name for k in range(e.end, close + 1)})  # "Orkuveita Reykjavíkur (Reykjavík Energy)"
        if not quoted:
            continue
        short = next((text for text, term in quoted if not term), "")
        for text, term in quoted:
            state.defined[text.lower()] = (short or e.name) if term else text
        hidden.update({k: e.name for k in range(e.end, close + 1)})  # type: ignore[operator]
    out = []
    for e in ents:
        if e.start in hidden:  # the parse may make a quoted name the subject: it is the name it defines
            e.name = hidden[e.start]
            out.append(e)
            continue
        said = doc[e.start:e.end].text.strip("".join(QUOTES)).strip().lower()  # as written, before any alias
        if said in state.defined:
            e.name = state.defined[said]
        elif _term(doc, e):  # "the Bank" of a text that defined none: the bank it described, else no name
            e.name = state.described.get(said, "") or (e.name if e.name.lower() != said else "")
            if not e.name:
                continue
        out.append(e)
    return out


def acronym(short: str, name: str) -> bool:
    """``short`` is made of the initials of ``name``'s words, its glue words' or not ("WTO",
    "SARAO", "IMS" for "Instituto Moreira Salles")."""
    words = [w for w in re.split(r"[\s\-]+", name) if w[:1].isalpha()]
    every = "".join(w[0] for w in words).upper()
    capitals = "".join(w[0] for w in words if w[0].isupper())
    return len(short) > 1 and short.isalpha() and short.isupper() and short in (every, capitals)


def _alternate(doc: Any, ents: list[Entity], before: Entity, close: int) -> bool:
    """``doc[before.end + 1:close]`` is another name of the organisation ``before``, as written in
    another language or spelled out: a single name, no place ("EPFL (Lausanne)" places EPFL) and,
    after no organisation, no person (the tagger calls many unfamiliar names persons)."""
    start = before.end + 1
    inside = [e for e in ents if start <= e.start < close]
    org = organisation_shaped(before.name) or doc[before.start].ent_type_ == "ORG"
    the = start + (1 if doc[start].lower_ == "the" else 0)
    return org and len(inside) == 1 and inside[0].start == the and inside[0].end == close \
        and doc[inside[0].start].ent_type_ not in ("GPE", "LOC", "NORP")


def _quoted(doc: Any, start: int, close: int) -> list[tuple[str, bool]]:
    """(words, whether they are a term) of each quoted stretch in ``doc[start:close]``."""
    out: list[tuple[str, bool]] = []
    k = start
    while k < close:
        if doc[k].text in QUOTES:
            end = next((m for m in range(k + 1, close) if doc[m].text in QUOTES), None)
            if end is None:
                break
            words = [t for t in doc[k + 1:end]]
            the = bool(words) and words[0].lower_ == "the" or (k > start and doc[k - 1].lower_ == "the")
            words = words[1:] if words and words[0].lower_ == "the" else words
            if words:
                text = "".join(t.text_with_ws for t in words).strip()
                out.append((text, the and len(words) == 1 and words[0].lower_ in TERMS))
            k = end + 1
        else:
            k += 1
    return out


def _term(doc: Any, e: Entity) -> bool:
    """A capitalised term after "the" ("the Company", "The Bank"), not part of a name."""
    return e.end - e.start == 1 and doc[e.start].lower_ in TERMS and e.start > 0 and \
        doc[e.start - 1].lower_ == "the" and doc[e.start].text[:1].isupper()


def named_title(title: str, candidate: str, sentences: list[str]) -> str:
    """The topic a page's ``title`` gives when its text is ``sentences``: ``candidate`` (the
    title's reading by :func:`~environments.graphrag.nlp_lines.title_topic`) when the text names it
    or the title has no parts (a fact sheet's title its text never repeats); else a part of the
    title, split at a colon or a spaced dash, that the text names, or the longest run of a
    part's leading words that the text's first sentence names; else ``candidate``."""
    text = " ".join(sentences)
    parts = _PARTS.split(" ".join(title.split()))
    first = next((s for s in sentences if s.strip()), "")
    if not candidate or _names(text, candidate):
        return candidate
    if len(parts) < 2:  # "Pfizer Inc.", "Carlsberg Group": the name without its legal or company word
        words = candidate.replace(",", " ").split()
        return " ".join(words[:-1]) if len(words) > 1 and organisation_shaped(words[-1]) and \
            not organisation_shaped(" ".join(words[:-1])) and _names(first, " ".join(words[:-1])) else candidate
    for part in parts:
        words = part.split()
        words = words[1:] if words and words[0].lower() == "the" else words
        for n in range(len(words), 0, -1):
            run = " ".join(words[:n]).rstrip(",")
            if run[:1].isupper() and run.lower() not in TERMS and _names(text if n == len(words) else first, run):
                return run
    return candidate


def _names(text: str, name: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text) is not None
