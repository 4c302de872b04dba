"""Relations read by their graph's own names, for the spaCy extractor
(:mod:`environments.graphrag.nlp_extract`), and names linked to a corpus's own page titles.

A real graph's relations have identifiers no English cue table holds (GeoNames' ``borders``,
Nations' ``booktranslations``, Kinships' ``term6``, UMLS' ``location_of``); a page that states a
fact in the graph's own vocabulary names the identifier between or beside the fact's two ends.
As in the rule-based extractor, which reads a relation's own name as a cue, such a sentence
states the relation between its clause's subject and the clause's other names; the clause is
found from the parse (a coordinated verb phrase, "... and has a w link to Y", is a clause of its
own sharing the sentence's subject). The direction follows English argument structure: the
subject is the head, unless another name is the object of "of" or "from" ("Y is the w
counterpart of X", "Y is reached from X through w"), which makes that name the head, as
"the founder of X" does for a relational noun. A relation named inside a clause introduced by
"that" or "whether" ("It is unclear whether X w Y") is reported, not asserted.

Entity linking to page titles follows the rule-based extractor (and Mintz et al. 2009's use of a
knowledge base's names): a page whose text names its own title is about that entity, and a span
of a line whose words are that title is that name, whatever the tagger makes of it ("Acquired
abnormality", "Person0").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from environments.graphrag.corpus import canonical_names
from environments.graphrag.nlp_coref import resolve
from environments.graphrag.nlp_lines import NOT_ASSERTED
from environments.graphrag.nlp_names import NEGATORS, PERSONAL, Entity, State

SOURCE_MARKERS = {"of", "from"}  # "the w counterpart of X", "reached from X": X is the head
REPORTING_MARKS = {"that", "whether", "if"}  # a subordinate clause's mark: what it states is reported
Gazetteer = dict[str, list[tuple[tuple[str, ...], str]]]  # first word -> (words, title), longest first


def name_words(relation: str) -> tuple[str, ...]:
    """A relation identifier's words as the tokenizer splits text: ``co-occurs_with`` ->
    (co, -, occurs, with)."""
    return tuple(re.findall(r"\w+|[^\w\s]", relation.replace("_", " ").lower()))


Mention = tuple[tuple[str, ...], str]  # a title's words, the title


def gazetteer(pages: Sequence[Any], tokenize: Any, memo: dict[tuple[str, str], Mention | None] | None = None
              ) -> Gazetteer:
    """Titles of ``pages`` that their own text names, by their first word (``tokenize``: the
    pipeline's tokenizer, so a title's words are the text's tokens); titles that differ only in
    spelling name one entity, spelled by :func:`~environments.graphrag.corpus.canonical_names`.
    ``memo``: each page's mention by (title, text), kept between calls by a caller that reads
    many documents against one corpus (a page's mention depends on nothing else)."""
    mentions: list[Mention] = []
    for page in pages:
        key = (page.title, page.text())
        found = memo.get(key, _UNSEEN) if memo is not None else _UNSEEN
        if found is _UNSEEN:
            found = _mention(*key, tokenize)
            if memo is not None:
                memo[key] = found
        if found is not None:
            mentions.append(found)
    out: Gazetteer = {}
    for words, title in sorted(canonical_names(mentions).items()):  # titles with one words' spelling: one name
        out.setdefault(words[0], []).append((words, title))
    for entries in out.values():
        entries.sort(key=lambda e: -len(e[0]))
    return out


_UNSEEN: Any = object()


def _mention(title: str, text: str, tokenize: Any) -> Mention | None:
    """(words, title) when ``text`` names ``title``, else None."""
    shown = " ".join(title.replace("_", " ").split())  # an identifier's "_" reads as a space;
    # a question ("What is BRAC?") is no name
    if not shown or "?" in shown or shown.lower() not in " ".join(text.split()).lower():
        return None
    words = tuple(t.lower_ for t in tokenize(shown))
    return (words, title) if words else None


def titled_spans(doc: Any, known: Gazetteer) -> list[tuple[int, int, str]]:
    """(start, end, title) of every longest span of ``doc`` whose words are a known page title."""
    out: list[tuple[int, int, str]] = []
    k = 0
    while k < len(doc):
        for words, title in known.get(doc[k].lower_, ()):
            if tuple(t.lower_ for t in doc[k:k + len(words)]) == words:
                out.append((k, k + len(words), title))
                k += len(words)
                break
        else:
            k += 1
    return out


def named_statements(doc: Any, relation: str, i: int, j: int, ents: list[Entity],
                     state: State, negated: bool, starts: set[int]) -> list[tuple[str, str, str, bool]]:
    """The statements of a relation named by its identifier at tokens ``i:j`` (``starts``: where
    the line's identifiers start, each of which can open a coordinated clause)."""
    sent = doc[i].sent
    start = sent.start
    for t in doc[sent.start:i]:  # "It is no longer the case that X w Y": the clause after the mark
        if t.lower_ in REPORTING_MARKS and (t.dep_ == "mark" or t.lower_ == "whether"):
            negated = negated or any(x.lower_ in NEGATORS | {"longer"} for x in doc[sent.start:t.i])
            if not negated:
                return []  # "It is unclear whether X w Y", "A novel once imagined that X w Y"
            start = t.i + 1
    if any(t.lower_ in NOT_ASSERTED for t in doc[start:i]):
        return []
    lo, hi = _clause(doc, i, start, sent.end, starts)
    subject = _subject(doc, start, lo if lo > start else sent.end, i, j, ents, state)
    if subject is None:
        return []
    name, at = subject
    others = [e for e in ents if lo <= e.start and e.end <= hi and e.start != at and (e.end <= i or e.start >= j)]
    sources = [e for e in others if e.start > 0 and doc[e.start - 1].lower_ in SOURCE_MARKERS
               and not (i <= e.start - 1 < j)]
    if sources:
        return [(e.name, relation, name, negated) for e in sources]
    return [(name, relation, e.name, negated) for e in others]


def _clause(doc: Any, i: int, start: int, end: int, starts: set[int]) -> tuple[int, int]:
    """The token range of the clause holding the cue: the sentence cut where "and" or a comma
    starts a coordinated verb phrase ("X w Y and has a v link to Z", "X w Y and v Z")."""
    cuts = [k for k in range(start, end - 1) if doc[k].lower_ in ("and", ",")
            and (doc[k + 1].pos_ in ("VERB", "AUX") or k + 1 in starts)]
    lo = max([start, *(k + 1 for k in cuts if k < i)])
    hi = min([end, *(k for k in cuts if k >= i)])
    return lo, hi


def _subject(doc: Any, start: int, first_end: int, i: int, j: int, ents: list[Entity],
             state: State) -> tuple[str, int] | None:
    """The sentence's subject in its first clause (the first name or subject pronoun, after a
    fronted phrase such as "Through w," or "As of 1990,"): (name, its first token, -1 for a
    pronoun)."""
    k = start
    if doc[k].pos_ == "ADP":  # a fronted phrase ends at its comma
        comma = next((t.i for t in doc[k:first_end] if t.text == ","), None)
        k = comma + 1 if comma is not None else k
    for t in doc[k:first_end]:
        if i <= t.i < j:
            continue
        e = next((e for e in ents if e.start == t.i), None)
        if e is not None:
            return e.name, e.start
        if t.lower_ in PERSONAL and (t.dep_ in ("nsubj", "nsubjpass") or t.i == k):  # "It w X", whatever its parse
            if t.lower_ in ("it", "its") and state.topic:  # a page's "it" is its subject
                return state.topic, -1
            who = resolve(doc, t, ents, state)
            return (who[0], -1) if who else None
    return None
