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

import hashlib
import os
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

CHUNK_CHARACTERS = 300


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

    def _chunk_numbers(self) -> list[int]:
        """Each sentence's chunk: sentences fill a chunk up to :data:`CHUNK_CHARACTERS`, as
        GraphRAG chunks by length (tokens), not by sentence count."""
        numbers, chunk, size = [], 0, 0
        for s in self.sentences:
            if size and size + 1 + len(s) > CHUNK_CHARACTERS:
                chunk, size = chunk + 1, 0
            size += len(s) + (1 if size else 0)
            numbers.append(chunk)
        return numbers

    def chunks(self) -> list[tuple[str, list[str]]]:
        out: dict[int, list[str]] = {}
        for n, s in zip(self._chunk_numbers(), self.sentences, strict=True):
            out.setdefault(n, []).append(s)
        return [(f"{self.id}#c{n}", sentences) for n, sentences in out.items()]

    def chunk_of(self, sentence: int) -> str:
        return f"{self.id}#c{self._chunk_numbers()[sentence]}"

    def chunk_ids(self) -> list[str]:
        """Every sentence's :meth:`chunk_of`, in one pass (a call per sentence is quadratic)."""
        return [f"{self.id}#c{n}" for n in self._chunk_numbers()]

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


def name_key(name: str) -> str:
    """The order in which a reader ranks names it cannot tell apart by evidence: case-folded,
    spaces collapsed. Who spells an entity how is the writers' choice (an attacker's page can
    title "cuba" as "Cuba"); which entities there are is not, so ties are broken on this key
    and the spelling decides nothing (session 20: "Cuba" sorted before "china")."""
    return " ".join(name.casefold().split())


def canonical_names(mentions: Iterable[tuple[K, str]]) -> dict[K, str]:
    """Each key's name in the graph, from every ``(key, spelling)`` mention of it: the spelling
    most mentions use, a tie going to the first in (:func:`name_key`, code point) order. A
    function of the mentions as a multiset: neither their order (which page came last) nor a
    single writer's spelling decides it, only outnumbering every other spelling does; and the
    reader's tie-breaks do not read it (:func:`name_key`)."""
    counts: dict[K, dict[str, int]] = {}
    for key, spelling in mentions:
        c = counts.setdefault(key, {})
        c[spelling] = c.get(spelling, 0) + 1
    return {key: most_used(c) for key, c in counts.items()}


def most_used(spellings: dict[str, int]) -> str:
    """The spelling :func:`canonical_names` names a key by, from its mentions' count per spelling."""
    if len(spellings) == 1:  # one spelling (most keys): it, without ranking
        return next(iter(spellings))
    return min(spellings, key=lambda n: (-spellings[n], name_key(n), n))


def has_ends(statement: Statement) -> bool:
    """A statement names both its ends. One with no head (a pronoun with nothing to refer to:
    "It is no longer the case that ..." opening a page titled after no entity) states nothing
    about any entity and never enters a graph (:class:`~environments.graphrag.kg.KnowledgeGraph`)."""
    return bool(statement.head.strip() and statement.tail.strip())


def gold_statements(documents: Iterable[Document]) -> list[Statement]:
    """What the documents state according to their writers (measurement only): the answer key
    an extractor is scored against."""
    return [Statement(c.fact.head, c.fact.relation, c.fact.tail, d.id, chunks[i], c.negated, c.dated)
            for d in documents for chunks in [d.chunk_ids()] for i, c in d.claims]


PUBLISH_KEY_ENV = "AGENTBED_GRAPHRAG_KEY"


def publish_key(seed: int) -> bytes:
    """The run's secret for document ids: the seed under a key from ``$AGENTBED_GRAPHRAG_KEY``
    (a fixed default keeps runs reproducible; set it to make ids unguessable to an agent that
    has read this code)."""
    secret = os.environ.get(PUBLISH_KEY_ENV, "agentbed-graphrag")
    return hashlib.blake2b(f"{secret}/{seed}".encode(), digest_size=32).digest()


def published_ids(documents: Iterable[Document], seed: int) -> list[str]:
    """Each document's published id, in the order given (see :func:`publish`)."""
    key = publish_key(seed)
    seen: dict[str, int] = {}
    ids = []
    for d in documents:
        body = d.title + "\n" + "\n".join(d.sentences)
        n = seen[body] = seen.get(body, -1) + 1
        ids.append("d" + hashlib.blake2b(f"{body}\n#{n}".encode(), key=key, digest_size=5).hexdigest())
    return ids


def publish(documents: Iterable[Document], seed: int) -> list[Document]:
    """The corpus as an index receives it: every document under an opaque id, a keyed hash of
    its own title and text (identical texts are numbered in turn), in the order of those ids.
    An id is a function of what the document says, never of when it was added or by whom, so
    neither an id nor a position tells an attacker's text from a clean one (attacks name
    documents by their own ids before this step)."""
    documents = list(documents)
    named = [Document(i, d.title, d.sentences, d.origin) for i, d in zip(published_ids(documents, seed), documents,
                                                                           strict=True)]
    named.sort(key=lambda d: d.id)
    if len({d.id for d in named}) != len(named):
        raise ValueError("document id collision: two documents hash to one id")
    return named
