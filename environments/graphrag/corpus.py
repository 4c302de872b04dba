"""Documents, sentence templates and the statements (triples with provenance) extracted from them.

A corpus is a list of :class:`Document`; each document is split into chunks of sentences.
One sentence states at most one fact, written with a relation phrase from the dataset's
phrase table, optionally with a temporal marker ("As of 2025/06/01, ...") and a negation
("it is no longer the case that ..."), the two devices GragPoison relies on.
The ``origin`` of a document (clean or poison) is ground truth for measurement only: no
defense or agent ever reads it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

CHUNK_SENTENCES = 6
NEGATION = "it is no longer the case that "


@dataclass(frozen=True)
class Fact:
    head: str
    relation: str
    tail: str


@dataclass
class Document:
    id: str
    title: str
    sentences: list[str]
    origin: str = "clean"  # clean | poison | edited: measurement only

    def chunks(self) -> list[tuple[str, list[str]]]:
        return [(f"{self.id}#c{i // CHUNK_SENTENCES}", self.sentences[i:i + CHUNK_SENTENCES])
                for i in range(0, len(self.sentences), CHUNK_SENTENCES)]

    def text(self) -> str:
        return " ".join(self.sentences)


@dataclass(frozen=True)
class Statement:
    """One extracted triple with its provenance (document and chunk) and its modality."""

    head: str
    relation: str
    tail: str
    doc: str
    chunk: str
    negated: bool = False
    dated: str = ""

    def fact(self) -> Fact:
        return Fact(self.head, self.relation, self.tail)


@dataclass
class PhraseTable:
    """Relation name -> verb phrase, and the regular expression that inverts the templates."""

    phrases: dict[str, str]
    _pattern: re.Pattern[str] | None = field(default=None, repr=False)

    def sentence(self, fact: Fact, *, dated: str = "", negated: bool = False) -> str:
        body = f"{fact.head} {self.phrases[fact.relation]} {fact.tail}."
        if negated:
            body = NEGATION + body
        if dated:
            return f"As of {dated}, {body}"
        return "I" + body[1:] if negated else body  # entity names keep their case

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            # Longest phrases first so "is located in" wins over a shorter prefix.
            alternatives = "|".join(re.escape(p) for p in sorted(set(self.phrases.values()), key=len, reverse=True))
            self._pattern = re.compile(
                r"^(?:As of (?P<date>\d{4}/\d{2}/\d{2}), )?(?P<neg>[Ii]t is no longer the case that )?"
                rf"(?P<head>\S.*?) (?P<phrase>{alternatives}) (?P<tail>\S.*?)\.$")
        return self._pattern

    def relation_of(self, phrase: str) -> str:
        for name, p in self.phrases.items():
            if p == phrase:
                return name
        raise KeyError(phrase)


def template_extract(documents: Iterable[Document], table: PhraseTable) -> list[Statement]:
    """The deterministic extractor: invert the sentence templates (sentences without a
    relation phrase, such as reasons and question text, yield nothing)."""
    out: list[Statement] = []
    inverse = {p: r for r, p in table.phrases.items()}
    for doc in documents:
        for chunk_id, sentences in doc.chunks():
            for sentence in sentences:
                m = table.pattern.match(sentence)
                if m is None:
                    continue
                out.append(Statement(m["head"], inverse[m["phrase"]], m["tail"], doc.id, chunk_id,
                                     negated=bool(m["neg"]), dated=m["date"] or ""))
    return out


def pages_from_facts(facts: Iterable[Fact], table: PhraseTable, *, prefix: str = "page") -> list[Document]:
    """One encyclopedia-style page per entity listing every fact it takes part in, so each fact
    is attested by two independent pages (its head's and its tail's): clean cross-validation."""
    by_entity: dict[str, list[Fact]] = {}
    for f in facts:
        by_entity.setdefault(f.head, []).append(f)
        if f.tail != f.head:
            by_entity.setdefault(f.tail, []).append(f)
    docs = []
    for i, entity in enumerate(sorted(by_entity)):
        docs.append(Document(f"{prefix}{i:05d}", entity, [table.sentence(f) for f in by_entity[entity]]))
    return docs


def publish(documents: Iterable[Document], seed: int) -> list[Document]:
    """The corpus as an index receives it: every document under a seeded random opaque id, in a
    seeded random order, so neither an id nor a position tells an attacker's text from a clean
    one (attacks name documents by their own ids before this step)."""
    rng = random.Random(f"publish-{seed}")
    docs = list(documents)
    ids: dict[str, None] = {}
    while len(ids) < len(docs):
        ids.setdefault(f"d{rng.getrandbits(40):010x}")
    named = [Document(i, d.title, d.sentences, d.origin) for i, d in zip(ids, docs, strict=True)]
    rng.shuffle(named)
    return named


def origin_of(documents: Iterable[Document]) -> Mapping[str, str]:
    return {d.id: d.origin for d in documents}
