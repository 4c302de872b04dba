"""Does anything but content tell poison from clean? A classifier on what the index stores.

Each published document is described by what an index knows about it besides what it claims:
its id (as a number), its position in the published order, its length (chunks, characters),
the dates its text carries (:data:`TELL_FEATURES`; the "document id order" and "fixed attack
date" tells of issue #38 scored 1.0), and since issue #50 item 3 every field the index stores and
every count the graph holds per document (:func:`index_tells`). A gradient-boosted classifier is
trained on development worlds and scored on held-out ones; a detection AUC near 0.5 means these
carry no tell. The attacker's test with title n-grams and two classifiers:
:mod:`suites.graphrag.attackertell`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import date

import numpy as np

from agentbed.stats import rank_auc
from attacks.graphrag.targets import AttackPlan
from environments.graphrag.corpus import Document, Fact, Statement
from environments.graphrag.dataset import Dataset
from environments.graphrag.pipeline import Index

Claimed = tuple[Fact, bool]  # a claim's fact and whether it is negated
DATE = re.compile(r"\b(\d{4})/(\d{2})/(\d{2})\b")
# Length is what an index stores, characters and chunks; a sentence count is a reading of the
# content (an attacker's full names make longer sentences than a page's pronouns: style).
TELL_FEATURES = ("id_value", "position", "chunks", "characters", "dated_sentences", "first_date")


def _ordinal(text: str) -> float:
    m = DATE.search(text)
    if not m:
        return 0.0
    y, mo, d = map(int, m.groups())
    try:
        return float(date(y, mo, d).toordinal())
    except ValueError:
        return 0.0


def document_tells(doc: Document, position: int, total: int) -> list[float]:
    text = doc.text()
    return [int(doc.id[1:], 16) / float(1 << (4 * (len(doc.id) - 1))), position / max(1, total),
            float(len(doc.chunks())), float(len(text)),
            float(sum(bool(DATE.search(s)) for s in doc.sentences)), _ordinal(text)]


# What an attacker's tell test reads (issue #50 item 3): every field the index stores per document
# (title, text length, chunks, sentences, dates, id, position) and every count the graph holds per
# document (statements, distinct heads, tails and relations, negated and dated statements, statements
# naming the title, chunks that yield one), the title's words hashed into a fixed number of columns,
# and how many other documents carry the same title.
KG_FEATURES = ("statements", "heads", "tails", "negated", "dated", "statements_per_kilochar", "relations",
               "statements_on_title", "chunks_with_statements")
TITLE_COLUMNS = 32
_HASHED = 15  # the first hashed title column
# Session 13 (a leak check, docs/graphrag.md "Tells"): what else the index and the graph store per
# document told beyond the columns above (development worlds 4-7, shape dress: all fields 0.79 ->
# 0.83 `gragpoison`, 0.75 -> 0.82 `bridged`): which relations its statements carry (0.69 alone),
# its sentences' lengths (the longest 0.60-0.63), its statements' dates, the chunk its first
# statement is in, and how much of the graph the entities it names (and its title) hold.
RELATION_COLUMNS = 16
STORED = ("first_statement_date", "last_statement_date", "sentence_mean_characters", "sentence_longest_characters",
          "sentence_shortest_characters", "largest_chunk_characters", "first_chunk_with_statements",
          "entity_degree_mean", "entity_degree_max", "title_degree", "communities", "community_size_mean")
_STORED = _HASHED + TITLE_COLUMNS + 4  # the first of the columns above
_RELATIONS = _STORED + len(STORED)  # the first hashed relation column
# :func:`index_tells`' columns by what they read, to ask which field gives poison away.
FEATURE_GROUPS = {"id": (0, 1), "length": (2, 3, 6, _STORED + 2, _STORED + 3, _STORED + 4, _STORED + 5),
                  "dates": (4, 5, _STORED, _STORED + 1),
                  "title": (7, 8, *range(_HASHED, _HASHED + TITLE_COLUMNS), _HASHED + TITLE_COLUMNS + 1, _STORED + 9),
                  "graph": (*range(9, 15), _HASHED + TITLE_COLUMNS, _HASHED + TITLE_COLUMNS + 2, _STORED + 6),
                  "relations": tuple(range(_RELATIONS, _RELATIONS + RELATION_COLUMNS)),
                  "shared title": (_HASHED + TITLE_COLUMNS + 3,),  # statements naming the title read the title
                  # what the rest of the graph holds on the entities a document names (cross-document)
                  "neighbourhood": (_STORED + 7, _STORED + 8, _STORED + 10, _STORED + 11)}
# Every column but those that compare documents with each other (a document's own fields).
OWN_FIELDS = tuple(sorted(c for name, cols in FEATURE_GROUPS.items() if name not in ("shared title", "neighbourhood")
                          for c in cols))
# :func:`index_tells`' columns one by one, for the per-field ablation (``--fields``).
COLUMNS = (*TELL_FEATURES, "sentences", "title_characters", "title_words", *KG_FEATURES[:6],
           *(f"title_word_{k}" for k in range(TITLE_COLUMNS)), *KG_FEATURES[6:], "shared_title", *STORED,
           *(f"relation_{k}" for k in range(RELATION_COLUMNS)))
# Where each field the index (:class:`Index`) and the graph (:class:`Statement`) store is read, by
# column name prefix; ``origin`` is the label, a community summary and the writer are no document's.
READS = {"Document.id": ("id_value", "position"), "Document.title": ("title_", "shared_title", "title_degree"),
         "Document.sentences": ("sentences", "characters", "chunks", "sentence_", "largest_chunk", "dated_sentences",
                                "first_date"),
         "Statement.head": ("heads", "entity_degree"), "Statement.tail": ("tails", "entity_degree"),
         "Statement.relation": ("relations", "relation_"), "Statement.doc": ("statements",),
         "Statement.chunk": ("chunks_with_statements", "first_chunk_with_statements"),
         "Statement.negated": ("negated",), "Statement.dated": ("dated", "first_statement_date", "last_statement_date"),
         "Index.membership": ("communities", "community_size_mean"), "Index.kg": ("statements",),
         "Index.documents": ("position",)}
NOT_READ = {"Document.origin": "the label", "Index.summaries": "per community, no document's",
            "Index.table": "the dataset's writer, no document's"}


def index_tells(index: Index) -> tuple[np.ndarray, np.ndarray]:
    """(features, is-not-clean) per published document of ``index``: :data:`TELL_FEATURES`,
    sentences, title characters and words, :data:`KG_FEATURES`, the hashed title words, the
    number of other documents with the same title, :data:`STORED` and the hashed relations of its
    statements (:data:`COLUMNS`; every field the index and the graph store: :data:`READS`)."""
    import zlib
    from collections import Counter

    from environments.graphrag.kg import communities

    docs = list(index.documents.values())
    kg = index.kg
    shared = Counter(d.title for d in docs)
    degree = Counter(e for s in kg.statements for e in (s.head, s.tail))
    # an index built without communities: the attacker detects them as the pipeline would
    membership = index.membership or communities(kg, "louvain", 0)
    size = Counter(membership.values())
    rows = []
    for position, doc in enumerate(docs):
        ids = kg.by_doc.get(doc.id, [])
        stated = [kg.statements[i] for i in ids]
        text = doc.text()
        title = np.zeros(TITLE_COLUMNS)
        for word in re.findall(r"\w+", doc.title.lower()):
            title[zlib.crc32(("w:" + ("#" if word.isdigit() else word)).encode()) % TITLE_COLUMNS] += 1
        rows.append([*document_tells(doc, position, len(docs)), float(len(doc.sentences)), float(len(doc.title)),
                     float(len(doc.title.split())), float(len(stated)), float(len({s.head for s in stated})),
                     float(len({s.tail for s in stated})), float(sum(s.negated for s in stated)),
                     float(sum(bool(s.dated) for s in stated)), 1000.0 * len(stated) / max(1, len(text)), *title,
                     float(len({s.relation for s in stated})),
                     float(sum(doc.title in (s.head, s.tail) for s in stated)),
                     float(len({s.chunk for s in stated})), float(shared[doc.title] - 1),
                     *_stored(doc, stated, degree, membership, size)])
    return np.array(rows), np.array([d.origin != "clean" for d in docs])


def _stored(doc: Document, stated: Sequence[Statement], degree: Mapping[str, int], membership: Mapping[str, int],
            size: Mapping[int, int]) -> list[float]:
    """:data:`STORED` and the hashed relation counts of ``doc``, whose extracted statements are ``stated``."""
    import zlib

    dates = [_ordinal(s.dated) for s in stated if s.dated]
    lengths = [len(x) for x in doc.sentences] or [0]
    chunks = [cid for cid, _ in doc.chunks()]
    first = min((chunks.index(s.chunk) for s in stated if s.chunk in chunks), default=-1)
    named = {e for s in stated for e in (s.head, s.tail)}
    groups = {membership[e] for e in named if e in membership}
    relations = np.zeros(RELATION_COLUMNS)
    for s in stated:
        relations[zlib.crc32(s.relation.encode()) % RELATION_COLUMNS] += 1
    return [min(dates, default=0.0), max(dates, default=0.0), float(np.mean(lengths)), float(max(lengths)),
            float(min(lengths)), float(max((len(" ".join(part)) for _, part in doc.chunks()), default=0)), float(first),
            float(np.mean([degree[e] for e in named])) if named else 0.0, float(max((degree[e] for e in named), default=0)),
            float(degree.get(doc.title, 0)), float(len(groups)),
            float(np.mean([size[membership[e]] for e in named if e in membership])) if groups else 0.0, *relations]


# Which attacker pages the test scores against clean ones (labels only, never a column). An attack
# can pad its pages with decoys that state nothing of its own (true facts, or what clean pages say):
# they do nothing for it but lower an AUC counted over every attacker page. "claims" (the default)
# scores the pages that carry one of the attack's claims (:func:`attack_claims`); "all" every
# attacker page (the figures before session 14).
SCORING = ("claims", "all")


def attack_claims(dataset: Dataset, plan: AttackPlan, index: Index, restated: bool = True) -> frozenset[Claimed]:
    """The attack's claims, from its own record (its plan and the gold claims of the pages it
    published): each (fact, negated) its pages state that the world does not hold as stated and
    no clean page of ``dataset`` says (the fake, the truth denied, a fabricated link), and with
    ``restated`` every claim on a fact the plan contests (the truth restated, as ``restate``
    does against TDP). Measurement only, like the gold claims it reads."""
    true = set(dataset.facts)
    said = {(c.fact, c.negated) for d in dataset.documents for _, c in d.claims}
    contested = {(t.fact.head, t.fact.relation) for t in plan.targets}
    return frozenset((c.fact, c.negated) for d in index.documents.values() if d.origin != "clean"
                     for _, c in d.claims
                     if ((c.negated or c.fact not in true) and (c.fact, c.negated) not in said)
                     or (restated and (c.fact.head, c.fact.relation) in contested))


@dataclass(frozen=True)
class Attacked:
    """An index and its attack's claims (:func:`attack_claims`), read only to label pages."""

    index: Index
    claims: frozenset[Claimed]


def attack_pages(index: Index, claims: Set[Claimed], scoring: str = "claims") -> np.ndarray:
    """Per document of ``index`` (:func:`index_tells`' rows), whether it is an attacker page the
    test scores: one stating one of ``claims``, or with ``scoring="all"`` any; never a clean page."""
    if scoring not in SCORING:
        raise ValueError(f"scoring: {scoring!r}, not one of {', '.join(SCORING)}")
    return np.array([d.origin != "clean" and (scoring == "all" or any((c.fact, c.negated) in claims
                                                                      for _, c in d.claims))
                     for d in index.documents.values()])


def _scored(item: Index | Attacked, scoring: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`index_tells`' rows of the clean pages and of the attacker pages scored; a bare
    index (no attack record) scores every attacker page."""
    if not isinstance(item, Attacked):
        return index_tells(item)
    x, y = index_tells(item.index)
    keep = ~y | attack_pages(item.index, item.claims, scoring)
    return x[keep], y[keep]


def attacker_tell_auc(train: Sequence[Index | Attacked], test: Sequence[Index | Attacked], seed: int = 0,
                      resamples: int = 500, columns: Sequence[int] | None = None,
                      scoring: str = "claims") -> tuple[float, float, float]:
    """Held-out ROC AUC, with a 95% bootstrap interval over held-out documents, of a
    gradient-boosted classifier on :func:`index_tells` (indexes as built by the pipeline), or on
    its ``columns`` only: clean pages against the attacker pages ``scoring`` keeps (:func:`attack_pages`;
    every attacker page of a bare index, which has no attack record)."""
    from sklearn.ensemble import GradientBoostingClassifier

    xs, ys = zip(*(_scored(i, scoring) for i in train), strict=True)
    xt, yt = zip(*(_scored(i, scoring) for i in test), strict=True)
    keep = list(columns) if columns is not None else slice(None)
    model = GradientBoostingClassifier(random_state=seed, n_estimators=100, max_depth=3)
    model.fit(np.vstack(xs)[:, keep], np.concatenate(ys))
    return auc_interval(np.concatenate(yt), model.predict_proba(np.vstack(xt)[:, keep])[:, 1], seed, resamples)


def cross_validated_tell_auc(indexes: Sequence[Index | Attacked], seed: int = 0, resamples: int = 500,
                             columns: Sequence[int] | None = None, within: bool = False,
                             scoring: str = "claims") -> tuple[float, float, float]:
    """Cross-validated ROC AUC of :func:`attacker_tell_auc`'s classifier, with a 95% bootstrap
    interval over documents of the pooled out-of-fold scores. Leave-one-index-out (each world
    scored by a model trained on the others), or with ``within`` five stratified folds over each
    index's own documents (a real graph's seeds share their clean pages, which a model trained
    on one seed would have seen when scoring another)."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold

    tables = [_scored(i, scoring) for i in indexes]
    keep = list(columns) if columns is not None else slice(None)
    if within:
        splits = StratifiedKFold(5, shuffle=True, random_state=seed)
        folds = [(x[train], y[train], x[test], y[test]) for x, y in tables for train, test in splits.split(x, y)]
    else:
        folds = [(np.vstack([x for j, (x, _) in enumerate(tables) if j != k]),
                  np.concatenate([y for j, (_, y) in enumerate(tables) if j != k]), xt, yt)
                 for k, (xt, yt) in enumerate(tables)]
    ys, ps = [], []
    for x, y, xt, yt in folds:
        model = GradientBoostingClassifier(random_state=seed, n_estimators=100, max_depth=3)
        model.fit(x[:, keep], y)
        ys.append(yt)
        ps.append(model.predict_proba(xt[:, keep])[:, 1])
    return auc_interval(np.concatenate(ys), np.concatenate(ps), seed, resamples)


def title_floor(entity_pages: int, series_pages: int, added: int) -> tuple[float, int]:
    """The least AUC of the best classifier on a title's kind (an entity's name or a series'
    "News 7") and whether another document shares it, over every way an attacker can title
    ``added`` pages, and the number titled after entities there. A corpus with one page per
    entity and no title used twice leaves an attacker two kinds of title: an entity's (its
    second copy) or a new number of a series; each cell's share of attacker pages is what
    the classifier learns. Of tied splits, the one with fewer entity titles."""
    if added < 1 or entity_pages + series_pages < 1:
        # one class: rank_auc is NaN for every split and a NaN is never the minimum (it compares
        # false), so the floor would read 1.0; nothing to tell apart (roc_auc_score raised too)
        raise ValueError(f"title_floor: {added} attacker and {entity_pages + series_pages} clean pages")
    best = (1.0, 0)
    for k in range(min(added, entity_pages) + 1):
        cells = [(added - k, series_pages), (k, k), (0, entity_pages - k)]  # (attacker, clean) pages
        y = np.concatenate([np.r_[np.ones(a), np.zeros(c)] for a, c in cells])
        p = np.concatenate([np.full(a + c, a / max(1, a + c)) for a, c in cells])
        # exact rank sums, one rounding: tied splits are equal to the bit (the ROC curve's
        # integral left a tie to its last bit)
        best = min(best, (rank_auc(y, p), k))
    return best


def auc_interval(y: np.ndarray, p: np.ndarray, seed: int = 0, resamples: int = 500) -> tuple[float, float, float]:
    """ROC AUC of scores ``p`` for labels ``y`` with a 95% bootstrap interval over documents
    (a resample holding one class only is skipped). The AUC is read from ranks, not through
    scikit-learn's ``roc_auc_score``, whose checks cost some 30 ms a call (one bootstrap: 200-500)."""
    from scipy.stats import rankdata

    y = np.asarray(y, dtype=bool)
    rng = np.random.default_rng(seed)
    # the draws one resample at a time (the generator's stream as it always was), then every
    # resample's ranks and AUC at once: the same numbers as one rank_auc call per resample (a rank sum
    # is a sum of halves, exact in any order), in a fifth of the time
    k = np.array([rng.integers(0, len(y), len(y)) for _ in range(resamples)], dtype=np.int64).reshape(-1, len(y))
    yk = y[k]
    positive = yk.sum(axis=1)
    mixed = (positive > 0) & (positive < len(y))
    yk, positive = yk[mixed], positive[mixed]
    ranks = rankdata(p[k[mixed]], axis=1) if len(positive) else np.zeros(yk.shape)
    boot = (np.where(yk, ranks, 0.0).sum(axis=1) - positive * (positive + 1) / 2) / (positive * (len(y) - positive))
    low, high = np.percentile(boot, [2.5, 97.5])
    return rank_auc(y, p), float(low), float(high)


def _cell(auc: tuple[float, float, float]) -> str:
    return f"{auc[0]:.2f} [{auc[1]:.2f}, {auc[2]:.2f}]"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m suites.graphrag.tells``: the attacker's tell AUC per attack, trained on
    development worlds 0-3 and scored on evaluation worlds 1000-1003; with ``--cv WORLDS``,
    leave-one-world-out over those worlds instead. Clean pages against the attacker pages that
    carry one of the attack's claims (``--score``, :func:`attack_pages`)."""
    import argparse

    from attacks.graphrag import ATTACKS
    from attacks.graphrag.camouflage import DRESSES
    from attacks.graphrag.scenario import poisoned_index
    from environments.graphrag.prose import PAGES
    from environments.graphrag.real import load_real
    from environments.graphrag.world import generate_world
    from suites.graphrag.tellfloor import on_title_floor

    parser = argparse.ArgumentParser(prog="python -m suites.graphrag.tells")
    parser.add_argument("--attacks", default=",".join(sorted(ATTACKS)))
    parser.add_argument("--dataset", default="world", help="world, or a real graph (nations, geonames, ...): its "
                                                           "seeds are question seeds, scored with --cv only")
    parser.add_argument("--train", default="0,1,2,3")
    parser.add_argument("--test", default="1000,1001,1002,1003")
    parser.add_argument("--cv", default="", help="comma-separated worlds: leave-one-world-out AUC over them "
                                                 "(instead of --train/--test)")
    parser.add_argument("--groups", action="store_true",
                        help=f"also each group of fields alone and every field but it: {', '.join(FEATURE_GROUPS)}")
    parser.add_argument("--fields", action="store_true",
                        help="also each field alone (the title's hashed words as one), one row per attack and field")
    parser.add_argument("--only", default="", help="comma-separated groups to score alone (beside all fields)")
    parser.add_argument("--dress", default="length", choices=DRESSES,
                        help="how attack documents are camouflaged (attacks/graphrag/camouflage.py)")
    parser.add_argument("--pages", default="one", choices=PAGES,
                        help="clean pages per entity: one, or several (half the entities get a second page)")
    parser.add_argument("--score", default="claims", choices=(*SCORING, "new"),
                        help="attacker pages scored against clean ones: those carrying one of the attack's claims "
                             "(on a fact its plan contests, or a false one no clean page says), new: only the "
                             "latter (the truth restated is no claim), all: every attacker page (before session 14)")
    args = parser.parse_args(argv)
    train, test = [int(s) for s in args.train.split(",")], [int(s) for s in args.test.split(",")]
    folds = [int(s) for s in args.cv.split(",")] if args.cv else []
    if args.dataset != "world" and not folds:
        parser.error("--dataset: a real graph's seeds share its clean pages; give --cv SEEDS")
    width, scoring = len(COLUMNS), "all" if args.score == "all" else "claims"
    variants: list[tuple[str, Sequence[int] | None]] = [("all", None)]
    variants += [("own fields", OWN_FIELDS)] if not args.groups else []
    variants += [(f"{name} only", FEATURE_GROUPS[name]) for name in args.only.split(",") if name and not args.groups]
    for name, cols in FEATURE_GROUPS.items() if args.groups else ():
        variants += [(f"{name} only", cols), (f"all but {name}", [c for c in range(width) if c not in cols])]
    hashed = [c for c, n in enumerate(COLUMNS) if n.startswith("title_word_")]
    fields = [(n, [c]) for c, n in enumerate(COLUMNS) if c not in hashed] + [("title's hashed words", hashed)]
    print(f"Attacker pages scored: {args.score} (--score).\n")
    print("| attack | " + " | ".join(f"AUC, {v}" for v, _ in variants)
          + " | attacker pages scored | on-title floor (as published) |")
    print("|---|" + "---|" * (len(variants) + 2))
    ablation = []
    for attack in args.attacks.split(","):
        def built(seeds: list[int], attack: str = attack) -> list[Attacked]:
            out = []
            for s in seeds:
                data = (generate_world(s, pages=args.pages) if args.dataset == "world"
                        else load_real(args.dataset, seed=s, pages=args.pages))
                poisoned = poisoned_index(data, attack, targets=12 if args.dataset == "world" else 20, seed=s,
                                          community_method="none", dress=args.dress)
                claims = attack_claims(data, poisoned.plan, poisoned.index, restated=args.score != "new")
                out.append(Attacked(poisoned.index, claims))
            return out

        cv = built(folds) if folds else []
        tr, te = (built(train), built(test)) if not folds else ([], [])

        def score(cols: Sequence[int] | None, resamples: int = 500, cv: list[Attacked] = cv,
                  tr: list[Attacked] = tr, te: list[Attacked] = te) -> tuple[float, float, float]:
            if cv:
                return cross_validated_tell_auc(cv, columns=cols, resamples=resamples, within=args.dataset != "world",
                                                scoring=scoring)
            return attacker_tell_auc(tr, te, columns=cols, resamples=resamples, scoring=scoring)

        cells = [score(cols) for _, cols in variants]
        held = cv or te
        scored = sum(int(attack_pages(a.index, a.claims, scoring).sum()) for a in held)
        added = sum(sum(d.origin != "clean" for d in a.index.documents.values()) for a in held)
        floor = on_title_floor([(a.index, a.claims, attack_pages(a.index, a.claims, scoring)) for a in held])
        print(f"| `{attack}` | " + " | ".join(_cell(c) for c in cells)
              + f" | {scored} of {added} | {_cell(floor.auc)} ({floor.flag_auc:.2f}) |", flush=True)
        ablation += [(attack, name, score(cols, 200)) for name, cols in fields] if args.fields else []
    if ablation:
        print("\n| attack | field | AUC, this field alone |\n|---|---|---|")
        for attack, name, (a, lo, hi) in ablation:
            print(f"| `{attack}` | {name} | {_cell((a, lo, hi))} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
