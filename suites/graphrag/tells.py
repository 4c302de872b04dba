"""Does anything but content tell poison from clean? A classifier on ids, order and metadata.

Each published document is described by what an index knows about it besides its words: its
id (as a number), its position in the published order, its length (chunks, characters)
and the dates its text carries. A gradient-boosted classifier is trained on
development worlds and scored on held-out ones; a detection AUC near 0.5 means these carry no
tell (the "document id order" and "fixed attack date" tells of issue #38 scored 1.0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

import numpy as np

from environments.graphrag.corpus import Document

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


def tell_table(published: Sequence[Document]) -> tuple[np.ndarray, np.ndarray]:
    """(features, is-not-clean) for every published document (:func:`publish`'s order)."""
    docs = list(published)
    x = np.array([document_tells(d, i, len(docs)) for i, d in enumerate(docs)])
    y = np.array([d.origin != "clean" for d in docs])
    return x, y


def tell_auc(train: Sequence[Sequence[Document]], test: Sequence[Sequence[Document]], seed: int = 0) -> float:
    """Held-out ROC AUC of a gradient-boosted classifier on :data:`TELL_FEATURES` alone, over
    published corpora (an index's ``documents.values()``, or :func:`publish`'s output)."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.metrics import roc_auc_score

    xs, ys = zip(*(tell_table(i) for i in train), strict=True)
    model = GradientBoostingClassifier(random_state=seed, n_estimators=100, max_depth=3)
    model.fit(np.vstack(xs), np.concatenate(ys))
    xt, yt = zip(*(tell_table(i) for i in test), strict=True)
    return float(roc_auc_score(np.concatenate(yt), model.predict_proba(np.vstack(xt))[:, 1]))
