"""How far any dress can hide an attack's pages: the floor of the on-title tell (issue #50 item 3).

A clean page titled after an entity states, in most cases, only facts that name that entity
(on development worlds 4-7, several pages: 64% of clean pages do; the others are series pages
such as "News 7", or entity pages with one statement about someone else). The index holds this
per document: how many statements a page yields and how many name its title. An attacker page
can be such a page only if it is titled after an entity that every claim it carries names (the
claim's subject or object), and a title read by a third page is a tell of its own (no clean
title is), so each entity with at most one clean page can title one attacker page. Which pages
can take which entity is a bipartite graph; its maximum matching (Hopcroft and Karp, "An n^5/2
algorithm for maximum matchings in bipartite graphs", SIAM J. Comput. 1973, as networkx
computes it) is the most attacker pages any dress can title on their claims.

The flag "an entity-titled page whose every statement names its title" is one binary column. If
a share ``a`` of clean pages carry it and at most ``b`` of the attacker's scored pages can, the
ROC AUC of that column alone is at least ``0.5 + (a - b) / 2``, whatever the dress writes: the
floor. An attack that keeps its pages and its claims cannot get under it; only fewer pages per
target can, which costs it its success (docs/graphrag-tells.md, session 14).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attacks.graphrag.titles import SERIES
from environments.graphrag.corpus import Fact
from environments.graphrag.pipeline import Index
from suites.graphrag.tells import Attacked, attack_pages


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


def able_pages(item: Attacked, scoring: str = "claims") -> np.ndarray:
    """Per document of ``item``'s index, whether it is one of the most scored attacker pages
    (:func:`attack_pages`) any dress could title after an entity every claim of the attack's it
    is read to state names, one page per entity with at most one clean page (a maximum
    bipartite matching; a page none of whose claims is read is free to take any title)."""
    import networkx as nx

    kg = item.index.kg
    docs = list(item.index.documents.values())
    clean_titles = Counter(d.title for d in docs if d.origin == "clean")
    hosts = {e for e, n in clean_titles.items() if n <= 1 and not SERIES.match(e)}
    hosts |= {e for s in kg.statements for e in (s.head, s.tail)} - set(clean_titles)
    scored = attack_pages(item.index, item.claims, scoring)
    able = np.zeros(len(docs), dtype=bool)
    graph = nx.Graph()
    pages = []
    for k, doc in enumerate(docs):
        if not scored[k]:
            continue
        read = [{s.head, s.tail} for s in (kg.statements[i] for i in kg.by_doc.get(doc.id, []))
                if (Fact(s.head, s.relation, s.tail), s.negated) in item.claims]
        if not read:  # none of its claims read: the graph holds nothing that ties its title
            able[k] = True
            continue
        pages.append(("page", k))
        graph.add_node(("page", k))
        graph.add_edges_from((("page", k), ("entity", e)) for e in set.intersection(*read) & hosts)
    if graph.number_of_edges():
        matching = nx.bipartite.maximum_matching(graph, top_nodes=pages)
        for p in pages:
            able[p[1]] = p in matching
    return able


@dataclass(frozen=True)
class Floor:
    """The on-title floor over some attacked indexes: the clean pages' share carrying the flag,
    the most of the attacker's scored pages that could, the AUC floor of that column with a 95%
    bootstrap interval over documents, and the column's AUC as the dress published the pages."""

    clean_share: float
    attacker_share: float
    auc: tuple[float, float, float]
    flag_auc: float


def on_title_floor(items: Sequence[Attacked], scoring: str = "claims", seed: int = 0,
                   resamples: int = 500) -> Floor:
    """:class:`Floor` over ``items`` pooled: clean pages against the attacker pages ``scoring`` keeps."""
    from sklearn.metrics import roc_auc_score

    ys, flags, ables = [], [], []
    for item in items:
        attack = attack_pages(item.index, item.claims, scoring)
        keep = np.array([d.origin == "clean" for d in item.index.documents.values()]) | attack
        ys.append(attack[keep])
        flags.append(on_title(item.index)[keep])
        ables.append(able_pages(item, scoring)[keep])
    y, flag, able = np.concatenate(ys), np.concatenate(flags), np.concatenate(ables)

    def floor(k: np.ndarray) -> float:
        a, b = flag[k][~y[k]].mean() if (~y[k]).any() else 0.0, able[k][y[k]].mean() if y[k].any() else 0.0
        return 0.5 + max(0.0, float(a - b)) / 2

    rng = np.random.default_rng(seed)
    boot = [floor(rng.integers(0, len(y), len(y))) for _ in range(resamples)]
    low, high = np.percentile(boot, [2.5, 97.5])
    everyone = np.arange(len(y))
    flag_auc = float(roc_auc_score(y, ~flag)) if y.any() and not y.all() else 0.5
    return Floor(float(flag[~y].mean()), float(able[y].mean()), (floor(everyone), float(low), float(high)), flag_auc)
