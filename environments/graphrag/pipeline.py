"""The indexing pipeline (documents -> statements -> graph -> communities -> summaries) and the
types a retrieval defense plugs into.

Defenses live in ``controllers/graphrag`` and attacks in ``attacks/graphrag``; this module only
defines the interface (:class:`Query`, :class:`Verdict`, :data:`Defense`) so the environment
never imports either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from environments.graphrag.corpus import Document, Statement, publish
from environments.graphrag.dataset import Dataset
from environments.graphrag.extractors import Extractor as Extractor  # build_index's parameter; re-exported
from environments.graphrag.kg import KnowledgeGraph, communities, community_summaries
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.prose import Writer


@dataclass(frozen=True)
class Query:
    """What a defense may know about a query: its text, nothing else (no topic, no relation
    plan: a defense works them out with :func:`environments.graphrag.parse.interpret`)."""

    text: str


@dataclass
class Verdict:
    """A defense's decision for one query: statements to drop, and a suspicion score per
    retrieved statement (higher = more likely poison) for detection AUC."""

    removed: set[int] = field(default_factory=set)
    suspicion: dict[int, float] = field(default_factory=dict)


Defense = Callable[[KnowledgeGraph, Query, Sequence[int]], Verdict]


@dataclass
class Index:
    documents: dict[str, Document]
    kg: KnowledgeGraph
    membership: dict[str, int]
    summaries: dict[int, str]
    table: Writer  # the dataset's writer: relation names and their phrases for summaries


def apply_poisoning(documents: Iterable[Document], added: Iterable[Document] = (),
                    replaced: dict[str, Document] | None = None) -> list[Document]:
    replaced = replaced or {}
    return [replaced.get(d.id, d) for d in documents] + list(added)


def build_index(documents: Sequence[Document], table: Writer, *, extractor: Extractor | None = None,
                community_method: str = "louvain", seed: int = 0) -> Index:
    """Publish, extract (the rule-based :class:`LexiconExtractor` over the relation names unless
    another extractor is given: the graph holds what extraction found, errors included), build
    the graph, detect communities and summarise them."""
    documents = publish(documents, seed)
    extract = extractor if extractor is not None else LexiconExtractor(sorted(table.phrases))
    statements = extract(documents)
    kg = KnowledgeGraph(statements, glosses=table.glosses)
    membership = communities(kg, community_method, seed) if community_method != "none" else {}
    return Index({d.id: d for d in documents}, kg, membership, community_summaries(kg, membership, phrase=table.phrases),
                 table)


def poison_labels(index: Index, dataset: Dataset) -> list[bool]:
    """Ground truth per statement (measurement only): poison if it comes from an attacker's
    document, or from an edited one and states a fact that neither the clean world nor its
    natural conflicts (superseded facts, disagreeing sources) contain. An extraction error in a
    clean page is noise, not poison."""
    clean = set(dataset.facts) | dataset.natural

    def poison(s: Statement) -> bool:
        origin = index.documents[s.doc].origin
        return origin == "poison" or (origin == "edited" and s.fact() not in clean)

    return [poison(s) for s in index.kg.statements]
