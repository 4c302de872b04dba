"""The attacker's tell test (issue #50 item 3): can a classifier tell an attack's pages from clean
ones by anything but what they claim?

It reads every field the index stores per document and every count the graph holds per document
(:func:`suites.graphrag.tells.index_tells`: ids, position, lengths, chunks, sentences, dates,
statements, heads, tails, relations, negations, degrees, communities, how many documents share
the title), and the title itself as a bag of character n-grams (1-3 characters within words, a
digit read as "#": a series number's value is when the page was published, and every generated
world numbers its clean series from 0, so the value would teach the generator's counts, not a
tell; how many digits it has is read). Two classifiers, leave one world out, each world scored by
models trained on the others: a logistic regression on standardized columns and a small
gradient-boosted tree ensemble. The attacker's AUC is the higher of the two, with a 95%
bootstrap interval over the pooled out-of-fold documents. Clean pages are scored against the
attacker pages that carry one of the attack's claims (:func:`suites.graphrag.tells.attack_pages`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from suites.graphrag.tells import (
    COLUMNS,
    FEATURE_GROUPS,
    TELL_FEATURES,
    Attacked,
    attack_pages,
    auc_interval,
    index_tells,
)

TITLE_NGRAMS = 128  # hashed character n-gram columns of the title
# every column; the title's own string (its n-grams, characters and words); the title group of
# :data:`FEATURE_GROUPS` (also statements naming the title and its entity's degree: what the graph
# holds on it); every column but the title's string; the six columns of the test before session 18
# (id, position, chunks, characters, dated sentences, first date: :data:`TELL_FEATURES`)
VIEWS = ("all", "title text", "title group", "no title text", "metadata")
_TEXT = [COLUMNS.index("title_characters"), COLUMNS.index("title_words")]


def tables(item: Attacked) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stored columns, title n-grams, is-attacker) for the clean pages and the scored attacker pages."""
    from sklearn.feature_extraction.text import HashingVectorizer

    x, y = index_tells(item.index)
    keep = ~y | attack_pages(item.index, item.claims)
    titles = [re.sub(r"\d", "#", d.title) for d, k in zip(item.index.documents.values(), keep, strict=True) if k]
    grams = HashingVectorizer(analyzer="char_wb", ngram_range=(1, 3), n_features=TITLE_NGRAMS, alternate_sign=False,
                              norm=None).transform(titles).toarray()
    return x[keep], grams, y[keep]


def _view(stored: np.ndarray, grams: np.ndarray, view: str) -> np.ndarray:
    hashed = [c for c, name in enumerate(COLUMNS) if name.startswith("title_word_")]
    if view == "title text":
        return np.hstack([stored[:, _TEXT + hashed], grams])
    if view == "title group":
        return np.hstack([stored[:, list(FEATURE_GROUPS["title"])], grams])
    if view == "metadata":
        return stored[:, :len(TELL_FEATURES)]
    if view == "no title text":
        return np.delete(stored, _TEXT + hashed, axis=1)
    return np.hstack([stored, grams])


def attacker_auc(built: Sequence[Attacked], view: str = "all", resamples: int = 500,
                 seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Leave-one-world-out AUC with its 95% bootstrap interval, per classifier (``logistic``,
    ``trees``) and for the attacker (``best``: the classifier with the higher AUC), over
    ``view`` of :data:`VIEWS`."""
    return attacker_aucs(built, (view,), resamples, seed)[view]


def attacker_aucs(built: Sequence[Attacked], views: Sequence[str] = VIEWS, resamples: int = 500,
                  seed: int = 0) -> dict[str, dict[str, tuple[float, float, float]]]:
    """:func:`attacker_auc` for each of ``views``, the documents' columns read once."""
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        raise ValueError(f"view: {unknown[0]!r} is not one of {', '.join(VIEWS)}")
    read = [tables(b) for b in built]
    return {view: _cross_validated([(_view(s, g, view), y) for s, g, y in read], resamples, seed) for view in views}


def _cross_validated(data: list[tuple[np.ndarray, np.ndarray]], resamples: int,
                     seed: int) -> dict[str, tuple[float, float, float]]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    scores: dict[str, list[np.ndarray]] = {"logistic": [], "trees": []}
    for k, (xt, _) in enumerate(data):
        x = np.vstack([d[0] for j, d in enumerate(data) if j != k])
        y = np.concatenate([d[1] for j, d in enumerate(data) if j != k])
        # One BLAS thread and one OpenMP thread: a few hundred rows give each parallel region too
        # little to share, and on a busy machine the threads' waits at each region's end cost many
        # times the fit's own CPU. OpenMP (the trees): 26.2 -> 2.3 s of CPU for one attack's three
        # views at load 13. BLAS (the logistic fit's L-BFGS-B): 0.55 -> 0.07 s of CPU and 3.7 -> 0.5 s
        # of wall for one view's three folds at load 24. The same AUCs to the bit.
        with threadpool_limits(limits=1):
            logistic = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=500)).fit(x, y)
            scores["logistic"].append(logistic.predict_proba(xt)[:, 1])
            trees = HistGradientBoostingClassifier(max_iter=60, max_depth=3, random_state=seed).fit(x, y)
            scores["trees"].append(trees.predict_proba(xt)[:, 1])
    truth = np.concatenate([d[1] for d in data])
    out = {name: auc_interval(truth, np.concatenate(p), seed, resamples) for name, p in scores.items()}
    out["best"] = max(out.values())
    return out


def built(attack: str, worlds: Sequence[int], dress: str = "length", dataset: str = "world") -> list[Attacked]:
    """``attack``'s index on each of ``worlds`` (a real graph's question seeds), its pages dressed
    with ``dress``, with the attack's claims (labels only)."""
    from attacks.graphrag.scenario import poisoned_index
    from environments.graphrag.real import load_real
    from environments.graphrag.world import generate_world
    from suites.graphrag.tells import attack_claims

    out = []
    for seed in worlds:
        data = generate_world(seed) if dataset == "world" else load_real(dataset, seed=seed)
        poisoned = poisoned_index(data, attack, targets=12 if dataset == "world" else 20, seed=seed,
                                  community_method="none", dress=dress)
        out.append(Attacked(poisoned.index, attack_claims(data, poisoned.plan, poisoned.index)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m suites.graphrag.attackertell``: the attacker's AUC per attack and view
    (:data:`VIEWS`), leave one world out over ``--worlds``, both classifiers."""
    import argparse

    from attacks.graphrag import ATTACKS
    from attacks.graphrag.camouflage import DRESSES

    parser = argparse.ArgumentParser(prog="python -m suites.graphrag.attackertell")
    parser.add_argument("--attacks", default=",".join(sorted(ATTACKS)))
    parser.add_argument("--worlds", default="0,1,2,3", help="comma-separated generated worlds (at least two)")
    parser.add_argument("--dress", default="length", choices=DRESSES)
    parser.add_argument("--resamples", type=int, default=500)
    args = parser.parse_args(argv)
    worlds = [int(s) for s in args.worlds.split(",") if s]
    unknown = [a for a in args.attacks.split(",") if a not in ATTACKS]
    if len(worlds) < 2 or unknown:
        parser.error(f"--worlds: give two or more (got {args.worlds!r})" if len(worlds) < 2
                     else f"--attacks: unknown {', '.join(unknown)}")
    print("| attack | " + " | ".join(f"{v}: logistic | {v}: trees" for v in VIEWS) + " |")
    print("|---|" + "---|" * (2 * len(VIEWS)))
    for attack in args.attacks.split(","):
        aucs = attacker_aucs(built(attack, worlds, args.dress), VIEWS, args.resamples)
        cells = [f"{a:.2f} [{lo:.2f}, {hi:.2f}]" for view in VIEWS for a, lo, hi in (aucs[view]["logistic"],
                                                                                     aucs[view]["trees"])]
        print(f"| `{attack}` | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
