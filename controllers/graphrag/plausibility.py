"""Topological plausibility of an uncontested claim, from rules the graph itself supports.

An edit of existing text (TKPA) rewrites every attestation of a fact, so no conflict is left
for TDP's ranker. What the edit cannot rewrite is the rest of the graph: true facts close
triangles through other facts (colleagues share an employer), so a path ``s - z - o`` of a
given relation type predicts ``r(s, o)``; the fake object lacks those paths, the old object
keeps them. The path types and their confidences are mined from the graph at hand, as rule
miners do (Galarraga et al., "AMIE: association rule mining under incomplete evidence in
ontological knowledge bases", WWW 2013: rules ``r(x, y) <- r1(x, z), r2(z, y)`` with the
partial-completeness confidence, counted only over subjects that have some ``r`` fact, and a
minimum support); no rule of any generator is written here. A claim ``(s, r, o)`` at an
uncontested step is implausible when, with rules of confidence at least ``rate``,

- a rule predicts another object of ``r`` for ``s`` and none predicts ``o`` (an edited
  employer: the colleagues still work for the old one), or
- a rule ``r'(x, w) <- r(x, y), r2(y, w)`` applied to ``o`` contradicts every ``r'`` fact the
  graph states about ``s`` (an edited birth city in another country than the citizenship).

A relation without such a rule is never checked.
"""

from __future__ import annotations

import weakref
from collections import Counter

from environments.graphrag.kg import KnowledgeGraph

PathType = tuple[str, bool, str, bool]  # (relation, forward, relation, forward): s -> z -> o


class RuleMiner:
    """Length-2 path rules of one graph and their confidences (built lazily, cached)."""

    def __init__(self, kg: KnowledgeGraph, min_support: int = 3) -> None:
        self.min_support = min_support
        self.steps: dict[str, set[tuple[str, bool, str]]] = {}
        self.tails: dict[tuple[str, str], set[str]] = {}
        for s in kg.statements:
            if s.negated or s.head == s.tail:
                continue
            self.steps.setdefault(s.head, set()).add((s.relation, True, s.tail))
            self.steps.setdefault(s.tail, set()).add((s.relation, False, s.head))
            self.tails.setdefault((s.head, s.relation), set()).add(s.tail)
        self.objects: dict[str, set[str]] = {}
        self.subjects: dict[str, set[str]] = {}
        for (head, relation), tails in self.tails.items():
            self.objects.setdefault(relation, set()).update(tails)
            self.subjects.setdefault(relation, set()).add(head)
        self._paths: dict[str, dict[str, set[PathType]]] = {}
        self._confidence: dict[str, dict[PathType, float]] = {}

    def paths(self, x: str) -> dict[str, set[PathType]]:
        """Entities two steps from ``x`` and the path types that reach them."""
        if x not in self._paths:
            out: dict[str, set[PathType]] = {}
            for r1, f1, z in self.steps.get(x, ()):
                for r2, f2, y in self.steps.get(z, ()):
                    if y != x:
                        out.setdefault(y, set()).add((r1, f1, r2, f2))
            self._paths[x] = out
        return self._paths[x]

    def confidence(self, relation: str) -> dict[PathType, float]:
        """Per path type: of the (subject, object-of-``relation``) pairs it links, over subjects
        with a ``relation`` fact, the share that are ``relation`` facts. Paths leaving the subject
        through ``relation`` itself are left out (they would let a claim predict itself)."""
        if relation not in self._confidence:
            body: Counter[PathType] = Counter()
            hit: Counter[PathType] = Counter()
            objects = self.objects.get(relation, set())
            for x in self.subjects.get(relation, ()):
                true = self.tails[(x, relation)]
                for y, types in self.paths(x).items():
                    if y not in objects:
                        continue
                    for t in types:
                        if t[:2] == (relation, True):
                            continue
                        body[t] += 1
                        hit[t] += y in true
            self._confidence[relation] = {t: hit[t] / n for t, n in body.items() if hit[t] >= self.min_support}
        return self._confidence[relation]

    def strong(self, relation: str, rate: float) -> set[PathType]:
        return {t for t, c in self.confidence(relation).items() if c >= rate}

    def predicted(self, subject: str, relation: str, rate: float) -> set[str]:
        """Objects of ``relation`` that a rule of confidence at least ``rate`` links to ``subject``."""
        strong = self.strong(relation, rate)
        objects = self.objects.get(relation, set())
        return {y for y, types in self.paths(subject).items() if y in objects and types & strong}

    def contradicted(self, subject: str, relation: str, obj: str, rate: float) -> bool:
        """A strong rule ``r'(x, w) <- relation(x, y), r2(y, w)`` applied to ``obj`` predicts only
        values of ``r'`` for ``subject`` that differ from every one the graph states."""
        for other in sorted(self.subjects):
            stated = self.tails.get((subject, other))
            if not stated or other == relation:
                continue
            for r1, f1, r2, f2 in self.strong(other, rate):
                if (r1, f1) != (relation, True):
                    continue
                implied = {w for r, f, w in self.steps.get(obj, ()) if (r, f) == (r2, f2) and w != subject}
                if implied and not implied & stated:
                    return True
        return False


_CACHE: weakref.WeakKeyDictionary[KnowledgeGraph, RuleMiner] = weakref.WeakKeyDictionary()


def rules(kg: KnowledgeGraph) -> RuleMiner:
    if kg not in _CACHE:
        _CACHE[kg] = RuleMiner(kg)
    return _CACHE[kg]


def implausible_claims(kg: KnowledgeGraph, entity: str, relation: str, objects: dict[str, set[int]],
                       rate: float) -> set[int]:
    """The claims at an uncontested step ``(entity, relation)`` whose object no strong rule
    predicts while a strong rule predicts another object (:class:`RuleMiner`)."""
    miner = rules(kg)
    predicted = miner.predicted(entity, relation, rate)
    return {i for o, claims in objects.items()
            if (predicted and o not in predicted) or miner.contradicted(entity, relation, o, rate) for i in claims}
