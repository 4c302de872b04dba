"""Provenance diversity of an uncontested claim: how many independent sources state it.

An edit of existing text (TKPA) rewrites the sentences that state a fact, so no conflict is left
for TDP's ranker; what it cannot fake for free is independent attestation. A claim is trusted
only when at least ``k`` documents of distinct provenance state it, as source-independence
truth discovery does (Dong, Berti-Equille and Srivastava, "Integrating conflicting data: the
role of source dependence", VLDB 2009: copies of one source count once). The corpus records no
author; the provenance a document carries is what it is about: a page about an entity
(:func:`document_subject`) is one source per subject, and a document about nobody (a short news
item or letter) is a source of its own.
"""

from __future__ import annotations

from controllers.graphrag.candidates import document_subject
from environments.graphrag.kg import KnowledgeGraph


def claim_sources(kg: KnowledgeGraph, entity: str, relation: str, obj: str) -> set[str]:
    """Distinct provenances of the documents in the index that assert ``(entity, relation, obj)``."""
    sources = set()
    for i in kg.by_pair.get((entity, relation), []):
        s = kg.statements[i]
        if s.tail == obj and not s.negated:
            subject = document_subject(kg, s.doc)
            sources.add(f"about:{subject}" if subject is not None else f"doc:{s.doc}")
    return sources


def undersourced_claims(kg: KnowledgeGraph, entity: str, relation: str, objects: dict[str, set[int]],
                        min_sources: int) -> set[int]:
    """The claims at an uncontested step ``(entity, relation)`` whose object fewer than
    ``min_sources`` distinct provenances state (:func:`claim_sources`)."""
    return {i for o, claims in objects.items()
            if len(claim_sources(kg, entity, relation, o)) < min_sources for i in claims}
