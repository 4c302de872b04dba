"""An attacker who knows the index's extractor writes what it reads (issue #50 item 4).

Every attack writes its claims in the corpus writer's sentence forms
(:meth:`environments.graphrag.prose.Writer.sentence`) and, but for the white-box attacks' model
of the rule extractor, never checks that the index reads them. An index built by another
extractor (spaCy's, the default for a user's own text) may miss a form the rules read, so an
attack can fail there for reasons of extraction, not of defense. With ``wording="read"`` the
attacker, knowing the deployed extractor, reads each page it is about to publish (dressed as it
will be published) with that extractor, and re-words every sentence stating one claim that the
extractor does not read as written: the first of the writer's other forms of the same claim (same
negation and date) that it does read on the page, else the sentence as it was. Sentences stating
several claims, or none, are left as written; nothing is added, so the budget's count of claims
is unchanged. It costs the attacker only extraction runs, as the rule-reading white-box attacks
(:mod:`attacks.graphrag.diluted`) and the dress (:mod:`attacks.graphrag.camouflage`) already do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from environments.graphrag.corpus import Claim, Document
from environments.graphrag.dataset import Dataset
from environments.graphrag.env import normalise
from environments.graphrag.extractors import Extractor

WORDINGS = ("writer", "read")  # the attack's own sentence forms; re-worded until the index's extractor reads them
FORMS = 8  # the writer's sentence forms tried per claim


def _near(clean: Sequence[Document], doc: Document) -> list[Document]:
    """The clean pages whose titles share a word with ``doc`` (entity linking knows a page only
    through its title's words): the context of the page's reading, without re-reading the corpus."""
    words = set(re.findall(r"\w+", (doc.title + " " + doc.text()).lower()))
    return [d for d in clean if words & set(re.findall(r"\w+", d.title.lower()))]


def _read(extract: Extractor, context: list[Document], doc: Document) -> set[tuple[str, str, str, bool]]:
    return {(normalise(s.head), s.relation, normalise(s.tail), s.negated)
            for s in extract([doc], context=[*context, doc])}


def _key(claim: Claim) -> tuple[str, str, str, bool]:
    """A claim as the reader compares names (a page title's "Uk" is the graph's "uk")."""
    return normalise(claim.fact.head), claim.fact.relation, normalise(claim.fact.tail), claim.negated


def reworded(doc: Document, dataset: Dataset, extract: Extractor) -> Document:
    """``doc`` with each one-claim sentence ``extract`` does not read as its claim re-worded in
    the first of the writer's forms of that claim it reads on the page (module docstring)."""
    context = _near(dataset.documents, doc)
    lines = list(doc.sentences)
    read = _read(extract, context, doc)
    for i, line in enumerate(doc.sentences):
        claims: tuple[Claim, ...] = getattr(line, "claims", ())
        if len(claims) != 1 or _key(claims[0]) in read:
            continue
        claim = claims[0]
        for variant in range(FORMS):
            other = dataset.table.sentence(claim.fact, dated=claim.dated, negated=claim.negated, variant=variant)
            if other == line:
                continue
            trial = Document(doc.id, doc.title, [*lines[:i], other, *lines[i + 1:]], doc.origin)
            got = _read(extract, context, trial)
            if _key(claim) in got:
                lines[i], read = other, got
                break
    return Document(doc.id, doc.title, lines, doc.origin)


def readable(added: Sequence[Document], dataset: Dataset, extract: Extractor) -> list[Document]:
    """Every page of ``added`` :func:`reworded` for ``extract``."""
    return [reworded(doc, dataset, extract) for doc in added]


__all__ = ["WORDINGS", "readable", "reworded"]
