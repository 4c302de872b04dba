"""A learned stage over the spaCy extractor's reading of one line: candidate (head, tail) pairs and
their features, scored per relation by a logistic regression (issue 50 items 1-2).

The candidates of a line are ordered pairs of its names (:func:`~environments.graphrag.nlp_names.entities`)
plus, as heads, the names the reading remembers from before the line (the page's topic, the last
person, thing and organisation: a pronoun's or an untagged subject's candidates). Each pair is
described by sparse string features in the manner of feature-based relation extraction (Mintz et
al., "Distant supervision for relation extraction without labeled data", ACL 2009: the dependency
path and the words between; Zhou et al., "Exploring various knowledge in relation extraction",
ACL 2005: entity types, words around the mentions), plus which triples the rule stage read for
the pair. One binary logistic regression per relation scores a pair: a candidate's triple is
added when its probability reaches the weights file's ``threshold``, and a triple the rule stage
read is kept unless its probability falls below the lower ``keep`` (:class:`PairModel`;
:mod:`suites.graphrag.pairmodel`). Relations the weights do not know (a real graph's identifiers)
keep the rule stage's reading.

The weights are trained by ``python -m suites.graphrag.pairmodel --write`` and ship in
``nlp_pairs.json``; nothing is fitted or downloaded at run time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import repeat
from pathlib import Path
from typing import Any

from environments.graphrag.nlp_names import NEGATORS, Entity, State

WEIGHTS = Path(__file__).with_name("nlp_pairs.json")
Triple = tuple[str, str, str, bool]
_PRONOUNS = {"he", "she", "it", "its", "his", "her", "they", "their", "i", "my", "we", "our"}


@dataclass(frozen=True)
class Remembered:
    """What the reading knew before the line: the antecedents a line's pronoun may take."""

    person: str
    thing: str
    organisation: str
    last_person: str

    @classmethod
    def of(cls, state: State) -> Remembered:
        return cls(state.last.get("person", ""), state.last.get("thing", ""), state.organisation, state.person)


@dataclass(frozen=True)
class Candidate:
    head: str
    tail: str
    features: tuple[str, ...]


def _lemma(t: Any) -> str:
    return t.lemma_.lower() if t.is_alpha else ("#" if t.like_num else t.text)


class _Line:
    """A parsed line's tokens read once: every candidate pair reads the same lemmas, roots and
    chains of heads (a spaCy token is a new object per index, built again at each read)."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.tokens = list(doc)
        self.lemmas = [_lemma(t) for t in self.tokens]
        self._roots: dict[tuple[int, int], Any] = {}
        self._up: dict[int, list[Any]] = {}

    def root(self, e: Entity) -> Any:
        key = (e.start, e.end)
        if key not in self._roots:
            self._roots[key] = self.doc[e.start:e.end].root
        return self._roots[key]

    def up(self, t: Any) -> list[Any]:
        """``t`` and its ancestors, nearest first."""
        if t.i not in self._up:
            self._up[t.i] = [t, *t.ancestors]
        return self._up[t.i]


def _label(tokens: list[Any], e: Entity) -> str:
    return tokens[e.end - 1].ent_type_ or "none"


def _path(line: _Line, a: Any, b: Any) -> tuple[str, str]:
    """The dependency path from ``a`` up to the lowest common ancestor and down to ``b``, and
    that ancestor's lemma (Bunescu and Mooney, "A shortest path dependency kernel for relation
    extraction", EMNLP 2005)."""
    up = line.up(a)
    down = line.up(b)
    ids = {t.i for t in down}
    lca = next((t for t in up if t.i in ids), None)
    if lca is None:
        return "none", "none"
    left = [t.dep_ for t in up[:[t.i for t in up].index(lca.i)]]
    right = [t.dep_ for t in down[:[t.i for t in down].index(lca.i)]]
    return "^".join(left) + "|" + line.lemmas[lca.i] + "|" + "v".join(reversed(right)), line.lemmas[lca.i]


def _tail_side(line: _Line, e: Entity, colon: int | None) -> list[str]:
    lemmas = line.lemmas
    root = line.root(e)
    before = lemmas[max(0, e.start - 2):e.start]
    f = [f"tk={e.kind}", f"tl={_label(line.tokens, e)}", f"tdep={root.dep_}", f"thead={lemmas[root.head.i]}",
         f"thead2={lemmas[root.head.head.i]}"]
    f += [f"pre1={before[-1] if before else '^'}", f"pre2={' '.join(before) or '^'}"]
    f.append(f"pre1|tk={before[-1] if before else '^'}|{e.kind}")
    if colon is not None and e.start > colon:
        label = " ".join(lemmas[t.i] for t in line.tokens[:colon] if t.is_alpha)[:40]
        f += [f"field={label}", *(f"fieldw={w}" for w in label.split())]
    return f


def candidates(doc: Any, ents: Sequence[Entity], state: State, before: Remembered,
               rules: Sequence[Triple]) -> list[Candidate]:
    """Every candidate pair of a parsed line, with its features (see the module docstring)."""
    parsed = _Line(doc)
    tokens, lemmas = parsed.tokens, parsed.lemmas
    colon = next((t.i for t in tokens if t.text == ":"), None)
    colon = colon if colon is not None and colon < 8 else None
    line = ["bias", *(["neg"] if any(t.lower_ in NEGATORS or t.dep_ == "neg" for t in tokens) else []),
            *(["field"] if colon is not None else [])]
    pron = sorted({t.lower_ for t in tokens if t.lower_ in _PRONOUNS})
    line += [f"pron={p}" for p in pron]
    inline = {e.name: e for e in ents}
    ruled: dict[tuple[str, str], list[str]] = {}
    by_tail: dict[str, set[tuple[str, str]]] = {}
    by_head: dict[str, set[tuple[str, str]]] = {}
    for h, r, t, neg in rules:
        ruled.setdefault((h, t), []).append(f"rule={r}" + ("|neg" if neg else ""))
        ruled.setdefault((t, h), []).append(f"rrev={r}")
        by_tail.setdefault(t, set()).add((r, h))
        by_head.setdefault(h, set()).add((r, t))

    def other(reads: dict[str, set[tuple[str, str]]], name: str, end: str, prefix: str) -> list[str]:
        """The relations the rule stage read for ``name`` with an other end than ``end``."""
        return sorted({f"{prefix}={r}" for r, x in reads.get(name, ()) if x != end})
    triggers = sorted({lemmas[t.i] for t in tokens if t.pos_ in ("VERB", "NOUN") and t.is_alpha})
    if any(e.kind != "any" and any(tokens[k].dep_ in ("nsubj", "nsubjpass") for k in range(e.start, e.end))
           for e in ents):
        line.append("subject_named")
    sources: dict[str, list[str]] = {}
    for src, name in (("topic", state.topic), ("person", before.person), ("thing", before.thing),
                      ("org", before.organisation), ("lastperson", before.last_person)):
        if name and name not in inline:
            sources.setdefault(name, []).append(f"src={src}")
    out = []
    root = doc[:].root if len(doc) else None
    root_lemma = lemmas[root.i] if root is not None else "^"
    for t_name, te in inline.items():
        tside = _tail_side(parsed, te, colon)
        pre = tside[5][5:]  # the word before the tail (_tail_side's "pre1=")
        tside += [*(f"lw|pre1={w}|{pre}" for w in triggers)]
        nearest = max((e for e in ents if e.end <= te.start and e.name != t_name), key=lambda e: e.end, default=None)
        for h_name, he in inline.items():
            if h_name == t_name:
                continue
            a, b = parsed.root(he), parsed.root(te)
            path, lca = _path(parsed, a, b)
            lo, hi = (he.end, te.start) if he.start < te.start else (te.end, he.start)
            between = [lemmas[t.i] for t in tokens[lo:hi] if not t.is_punct][:10]
            gap = hi - lo
            f = ["src=inline", f"hk={he.kind}", f"hl={_label(tokens, he)}", f"hdep={a.dep_}",
                 f"order={'ht' if he.start < te.start else 'th'}",
                 f"gap={min(gap, 12) // 3}", f"path={path}", f"lca={lca}",
                 f"lca|tk={lca}|{te.kind}", f"hdep|pre1={a.dep_}|{pre}",
                 *(f"bw={w}" for w in sorted(set(between))),
                 *(["topic"] if h_name == state.topic else []), *other(by_head, h_name, t_name, "rule_head"),
                 *other(by_tail, t_name, h_name, "rule_tail"), f"kinds={he.kind}|{te.kind}",
                 f"bws={' '.join(between[:6])}", f"lca|pre1={lca}|{pre}", f"path|tk={path}|{te.kind}",
                 *(["nearest"] if nearest is not None and nearest.name == h_name else []),
                 *(["comma_between"] if any(t.text == "," for t in tokens[lo:hi]) else [])]
            out.append(Candidate(h_name, t_name, tuple(sorted({*line, *tside, *f, *ruled.get((h_name, t_name), [])}))))
        for h_name, srcs in sources.items():
            f = [*srcs, f"hk={state.kinds.get(h_name, 'none')}", f"root={root_lemma}", f"root|pre1={root_lemma}|{pre}",
                 *(f"src|pron={s[4:]}|{p}" for s in srcs for p in pron), *other(by_head, h_name, t_name, "rule_head"),
                 *other(by_tail, t_name, h_name, "rule_tail"), f"root|tk={root_lemma}|{te.kind}",
                 f"kinds={state.kinds.get(h_name, 'none')}|{te.kind}"]
            out.append(Candidate(h_name, t_name, tuple(sorted({*line, *tside, *f, *ruled.get((h_name, t_name), [])}))))
    seen = {(c.head, c.tail) for c in out}
    for (h, t), feats in sorted(ruled.items()):  # a rule's pair whose ends were not among the line's names
        if (h, t) not in seen and any(x.startswith("rule=") for x in feats):
            out.append(Candidate(h, t, tuple(sorted({*line, "src=rule-only", *feats}))))
    return out


@dataclass(frozen=True)
class PairModel:
    """Per relation: an intercept and sparse feature weights. A candidate's triple is added when
    its probability reaches ``threshold``; a triple the rule stage read is kept unless its
    probability falls below ``keep`` (a lower bar: the model, fitted on prose, drops a rule
    stage's reading only when it is confident, so text unlike its training prose, such as a
    generated corpus's templates, keeps the rule stage's reading)."""

    weights: dict[str, tuple[float, dict[str, float]]]
    threshold: float = 0.5
    keep: float = 0.5

    def probability(self, relation: str, features: Sequence[str]) -> float:
        bias, w = self.weights[relation]
        z = bias + sum(map(w.get, features, repeat(0.0)))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @cached_property
    def _weighted(self) -> frozenset[str]:
        """Every feature some relation weighs: a feature none weighs adds 0.0 to every sum."""
        return frozenset(f for _, w in self.weights.values() for f in w)

    def read(self, found: Sequence[Candidate], rules: Sequence[Triple], relations: Sequence[str]) -> list[Triple]:
        """The line's triples: the rule stage's for relations the model does not know and its
        negated ones (the model scores asserted facts only), then every candidate's relation
        whose probability reaches ``keep`` (a triple the rule stage read) or ``threshold``."""
        known = [r for r in relations if r in self.weights]
        out = [x for x in rules if x[1] not in self.weights or x[3]]
        negated = {(h, r, t) for h, r, t, n in rules if n}
        asserted = {(h, r, t) for h, r, t, n in rules if not n}
        for c in found:
            # the same sums without the 0.0 terms of features no relation weighs (x + 0.0 == x)
            weighed = [f for f in c.features if f in self._weighted]
            for r in known:
                if (c.head, r, c.tail) in negated:
                    continue
                bar = self.keep if (c.head, r, c.tail) in asserted else self.threshold
                if self.probability(r, weighed) >= bar:
                    out.append((c.head, r, c.tail, False))
        return out


def load_model(path: Path = WEIGHTS) -> PairModel:
    """The shipped weights (``nlp_pairs.json``); a file that does not parse is named."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return PairModel({r: (float(v["bias"]), {k: float(x) for k, x in v["weights"].items()})
                          for r, v in raw["relations"].items()}, float(raw["threshold"]), float(raw["keep"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RuntimeError(f"{path}: not a pair model's weights ({exc.__class__.__name__}: {exc})") from None


@lru_cache(maxsize=1)
def shipped_model() -> PairModel:
    return load_model()


@dataclass
class PairStage:
    """The spaCy extractor's learned stage: each line's candidates rescored by ``model`` (none:
    the rule stage's triples are kept), and recorded in ``rows`` when given (training data:
    document id, candidates, the rule stage's triples)."""

    model: PairModel | None = None
    rows: list[tuple[str, list[Candidate], list[Triple]]] | None = None

    def __call__(self, doc_id: str, doc: Any, ents: Sequence[Entity], state: State, before: Remembered,
                 found: list[Triple], relations: Sequence[str]) -> list[Triple]:
        if self.model is None and self.rows is None:
            return found
        cands = candidates(doc, ents, state, before, found)
        if self.rows is not None:
            self.rows.append((doc_id, cands, list(found)))
        return self.model.read(cands, found, relations) if self.model is not None else found
