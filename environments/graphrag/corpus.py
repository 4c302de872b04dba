"""Documents, the claims their sentences make, and the statements (triples with provenance)
extracted from them.

A corpus is a list of :class:`Document`; each document is split into chunks of sentences.
Sentences are prose written by a generator (:mod:`environments.graphrag.prose`) or by an
attacker; a generated sentence is a :class:`Line`, a string that also carries the gold
:class:`Claim` objects it states (several for a sentence that combines facts, none for a
distractor). The gold claims and the ``origin`` of a document (clean or poison) are ground truth
for measurement only: the extractor, defenses and agents read the text, never them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

CHUNK_SENTENCES = 6


@dataclass(frozen=True)
class Fact:
    head: str
    relation: str
    tail: str


@dataclass(frozen=True)
class Claim:
    """What a sentence asserts about one fact: that it holds (or no longer holds), maybe as of a date."""

    fact: Fact
    negated: bool = False
    dated: str = ""


class Line(str):
    """A sentence's text, carrying the gold claims it states (measurement only)."""

    claims: tuple[Claim, ...]

    def __new__(cls, text: str, claims: Iterable[Claim] = ()) -> Line:
        line = super().__new__(cls, text)
        line.claims = tuple(claims)
        return line


@dataclass
class Document:
    id: str
    title: str
    sentences: list[str]
    origin: str = "clean"  # clean | poison | edited: measurement only

    def chunks(self) -> list[tuple[str, list[str]]]:
        return [(f"{self.id}#c{i // CHUNK_SENTENCES}", self.sentences[i:i + CHUNK_SENTENCES])
                for i in range(0, len(self.sentences), CHUNK_SENTENCES)]

    def chunk_of(self, sentence: int) -> str:
        return f"{self.id}#c{sentence // CHUNK_SENTENCES}"

    def text(self) -> str:
        return " ".join(self.sentences)

    @property
    def claims(self) -> list[tuple[int, Claim]]:
        """(sentence index, claim) for every gold claim the document's sentences state."""
        return [(i, c) for i, s in enumerate(self.sentences) for c in getattr(s, "claims", ())]


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


def gold_statements(documents: Iterable[Document]) -> list[Statement]:
    """What the documents state according to their writers (measurement only): the answer key
    an extractor is scored against."""
    return [Statement(c.fact.head, c.fact.relation, c.fact.tail, d.id, d.chunk_of(i), c.negated, c.dated)
            for d in documents for i, c in d.claims]


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
