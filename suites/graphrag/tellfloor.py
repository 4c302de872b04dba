"""How far any dress can hide an attack's pages: the floor of the on-title tell (issue #50 item 3).

A clean page titled after an entity states, in most cases, only facts that name that entity
(on development worlds 4-7, several pages: 61% of clean pages do; the others are series pages
such as "News 7", entity pages with a statement about someone else, or none). The index holds this
per document: how many statements a page yields and how many name its title. An attacker page
can be such a page only if it is titled after an entity that every claim of the attack's read in
it names (the claim's subject or object), and a title carried by a third page is a tell of its own (no clean
title is), so each entity with at most one clean page can title one attacker page. Which pages
can take which entity is a bipartite graph; the size of its maximum matching (:func:`matching`)
is the most attacker pages any dress can title on their claims.

The flag "an entity-titled page whose every statement names its title" is one binary column. If
a share ``a`` of clean pages carry it and at most ``b`` of the attacker's scored pages can, the
ROC AUC of that column alone is at least ``0.5 + (a - b) / 2``, whatever the dress writes: the
floor. An attack that keeps its pages and its claims cannot get under it; only fewer pages per
target can, which costs it its success (docs/graphrag-tells.md, session 14).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence, Set
from dataclasses import dataclass

import numpy as np

from agentbed.stats import rank_auc
from attacks.graphrag.titles import SERIES
from environments.graphrag.corpus import Fact
from environments.graphrag.pipeline import Index

# (an index, its attack's claims as (fact, negated), which of its documents are scored attacker
# pages: suites.graphrag.tells.attack_pages)
Scored = tuple[Index, Set[tuple[Fact, bool]], np.ndarray]


def on_title(index: Index) -> np.ndarray:
    """Per document of ``index`` (its published order): titled after an entity (no series number),
    with at least one statement, every one naming the title."""
    kg = index.kg
    flags = []
    for doc in index.documents.values():
        stated = [kg.statements[i] for i in kg.by_doc.get(doc.id, [])]
        flags.append(bool(stated) and not SERIES.match(doc.title)
                     and all(doc.title in (s.head, s.tail) for s in stated))
    return np.array(flags, dtype=bool)


def able_pages(item: Scored) -> np.ndarray:
    """Per document of ``item``'s index, whether it is one of the most scored attacker pages
    any dress could title after an entity every claim of the attack's it is read to state names,
    one page per entity with at most one clean page (:func:`matching`; a page none of whose
    claims is read is free to take any title)."""
    index, claims, scored = item
    kg = index.kg
    docs = list(index.documents.values())
    clean_titles = Counter(d.title for d in docs if d.origin == "clean")
    hosts = {e for e, n in clean_titles.items() if n <= 1 and not SERIES.match(e)}
    hosts |= {e for s in kg.statements for e in (s.head, s.tail)} - set(clean_titles)
    able = np.zeros(len(docs), dtype=bool)
    options: dict[int, list[str]] = {}
    for k, doc in enumerate(docs):
        if not scored[k]:
            continue
        read = [{s.head, s.tail} for s in (kg.statements[i] for i in kg.by_doc.get(doc.id, []))
                if (Fact(s.head, s.relation, s.tail), s.negated) in claims]
        if read:
            options[k] = sorted(set.intersection(*read) & hosts)
        else:  # none of its claims read: the graph holds nothing that ties its title
            able[k] = True
    for k in matching(options):
        able[k] = True
    return able


def matching(options: dict[int, list[str]]) -> set[int]:
    """The pages a maximum matching of pages to the entities each may take (``options``) covers,
    one page per entity: augmenting paths from each page in turn (Kuhn, "The Hungarian method for
    the assignment problem", Naval Research Logistics Quarterly 1955), in the given orders, so the
    same input gives the same pages."""
    holder: dict[str, int] = {}

    def augment(page: int, seen: set[str]) -> bool:
        for e in options[page]:
            if e not in seen:
                seen.add(e)
                if e not in holder or augment(holder[e], seen):
                    holder[e] = page
                    return True
        return False

    for page in sorted(options):
        augment(page, set())
    return set(holder.values())


@dataclass(frozen=True)
class Floor:
    """The on-title floor over some attacked indexes: the clean pages' share carrying the flag,
    the most of the attacker's scored pages that could, the AUC floor of that column with a 95%
    bootstrap interval over documents, and the column's AUC as the dress published the pages."""

    clean_share: float
    attacker_share: float
    auc: tuple[float, float, float]
    flag_auc: float


def on_title_floor(items: Sequence[Scored], seed: int = 0, resamples: int = 500) -> Floor:
    """:class:`Floor` over ``items`` pooled: clean pages against each index's scored attacker pages.
    With no scored attacker page (or no clean page), that side's share and the column's AUC are
    NaN: nothing was measured there."""
    ys, flags, ables = [], [], []
    for item in items:
        index, _, attack = item
        keep = np.array([d.origin == "clean" for d in index.documents.values()]) | attack
        ys.append(attack[keep])
        flags.append(on_title(index)[keep])
        ables.append(able_pages(item)[keep])
    y, flag, able = np.concatenate(ys), np.concatenate(flags), np.concatenate(ables)

    def floor(k: np.ndarray) -> float:
        a, b = flag[k][~y[k]].mean() if (~y[k]).any() else 0.0, able[k][y[k]].mean() if y[k].any() else 0.0
        return 0.5 + max(0.0, float(a - b)) / 2

    rng = np.random.default_rng(seed)
    boot = [floor(rng.integers(0, len(y), len(y))) for _ in range(resamples)]
    low, high = np.percentile(boot, [2.5, 97.5])
    everyone = np.arange(len(y))
    # one class (no attacker page scored, or no clean page): rank_auc's NaN, not the 0.5 of "the
    # column tells nothing", which the table would print as a measured figure
    flag_auc = rank_auc(y, ~flag)
    nan = float("nan")
    return Floor(float(flag[~y].mean()) if (~y).any() else nan, float(able[y].mean()) if y.any() else nan,
                 (floor(everyone), float(low), float(high)), flag_auc)
