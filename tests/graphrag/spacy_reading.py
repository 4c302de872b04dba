"""What the spaCy extractor's tests share: the schema's relations and a paragraph's triples as a
user's file gives them (the ``spacy_extract`` fixture, built once per worker, is in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from suites.graphrag.userdocs import user_document

RELATIONS = ["affiliated_with", "born_in", "citizen_of", "colleague_of", "founded_by", "headquartered_in",
             "lives_in", "located_in", "office_in", "partners_with", "studied_at", "works_for"]


def triples(extract: Callable[[Sequence[Any]], Any], text: str, title: str = "") -> set[tuple[str, str, str, bool]]:
    """(head, relation, tail, negated) of every statement ``extract`` reads in one paragraph."""
    doc = user_document("p0", title, text.splitlines())
    return {(s.head, s.relation, s.tail, s.negated) for s in extract([doc])}


def pairs(got: set[tuple[str, str, str, bool]], relation: str) -> set[tuple[str, str]]:
    """(head, tail) of the asserted statements of ``relation`` among ``triples``' answer."""
    return {(h, t) for h, r, t, n in got if r == relation and not n}
