"""Baseline retrieval defenses, each a plain function over the retrieved statements.

- ``ngram``: a perplexity-style plausibility filter (Jelinek, "Statistical Methods for Speech
  Recognition", 1997: a word bigram model with add-one smoothing, fitted on the whole corpus);
  documents far more perplexing than the other retrieved documents are dropped. The
  perplexity filter of Alon & Kamfonas ("Detecting Language Model Attacks with Perplexity", 2023).
- ``cluster``: semantic-similarity filtering in the spirit of GRADA (EMNLP 2025): TF-IDF
  vectors; a document that resembles the query much more than it resembles the other
  retrieved documents is suspicious.
- ``paraphrase``: answer a paraphrased query too and keep only the evidence both retrieve.
- ``provenance``: trust per document as the share of its statements that some other
  document corroborates; untrusted documents are dropped.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from controllers.graphrag.candidates import interpret_query
from controllers.graphrag.features import fact_documents
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.pipeline import Defense, Query, Verdict

_WORD = re.compile(r"[a-z0-9/]+")
Z_THRESHOLD = 1.5


def _drop_documents(kg: KnowledgeGraph, retrieved: Sequence[int], doc_score: dict[str, float],
                    flagged: set[str]) -> Verdict:
    return Verdict(removed={i for i in retrieved if kg.statements[i].doc in flagged},
                   suspicion={i: doc_score.get(kg.statements[i].doc, 0.0) for i in retrieved})


def _zscore_outliers(scores: dict[str, float], threshold: float = Z_THRESHOLD) -> set[str]:
    if len(scores) < 3:
        return set()
    values = np.array(list(scores.values()))
    mu, sd = values.mean(), values.std()
    return {d for d, v in scores.items() if sd > 0 and (v - mu) / sd > threshold}


def _doc_texts(kg: KnowledgeGraph, retrieved: Sequence[int]) -> dict[str, str]:
    """Retrieved documents as the reader would see them: their statements, in the corpus's
    own words (negations and dates included)."""
    texts: dict[str, list[str]] = {}
    for i in retrieved:
        s = kg.statements[i]
        words = ("as of " + s.dated + " " if s.dated else "") + ("no longer " if s.negated else "")
        texts.setdefault(s.doc, []).append(f"{words}{s.head} {s.relation} {s.tail}")
    return {d: " . ".join(v) for d, v in texts.items()}


@lru_cache(maxsize=8)
def _bigram_model(kg: KnowledgeGraph) -> tuple[Counter, Counter, int]:
    unigrams: Counter = Counter()
    bigrams: Counter = Counter()
    for text in _doc_texts(kg, range(len(kg.statements))).values():
        words = ["<s>", *_WORD.findall(text.lower())]
        unigrams.update(words)
        bigrams.update(zip(words, words[1:], strict=False))
    return unigrams, bigrams, len(unigrams) + 1


def perplexity(text: str, model: tuple[Counter, Counter, int]) -> float:
    unigrams, bigrams, vocab = model
    words = ["<s>", *_WORD.findall(text.lower())]
    logp = sum(math.log((bigrams[(a, b)] + 1) / (unigrams[a] + vocab)) for a, b in zip(words, words[1:], strict=False))
    return math.exp(-logp / max(1, len(words) - 1))


def ngram_filter(kg: KnowledgeGraph, query: Query, retrieved: Sequence[int]) -> Verdict:
    model = _bigram_model(kg)
    scores = {d: math.log(perplexity(t, model)) for d, t in _doc_texts(kg, retrieved).items()}
    return _drop_documents(kg, retrieved, scores, _zscore_outliers(scores))


def cluster_filter(kg: KnowledgeGraph, query: Query, retrieved: Sequence[int]) -> Verdict:
    texts = _doc_texts(kg, retrieved)
    if len(texts) < 3:
        return Verdict()
    ids = sorted(texts)
    matrix = TfidfVectorizer().fit_transform([query.text, *(texts[d] for d in ids)])
    sim = cosine_similarity(matrix)
    to_query = sim[0, 1:]
    among = sim[1:, 1:]
    np.fill_diagonal(among, np.nan)
    to_others = np.nanmean(among, axis=1)
    scores = {d: float(q - o) for d, q, o in zip(ids, to_query, to_others, strict=True)}
    return _drop_documents(kg, retrieved, scores, _zscore_outliers(scores))


_PARAPHRASE = [("which", "what"), ("in which", "where in"), ("born", "birthplace"), ("company", "firm"),
               ("country", "nation"), ("city", "town"), ("university", "college")]


def paraphrase(text: str) -> str:
    out = text.lower()
    for a, b in _PARAPHRASE:
        out = out.replace(a, b)
    return out


def paraphrase_filter(kg: KnowledgeGraph, query: Query, retrieved: Sequence[int]) -> Verdict:
    """Query paraphrasing: re-link the seed entity from a paraphrase, retrieve again, keep the
    intersection. Entity-anchored retrieval barely changes under paraphrase, which is the
    finding GragPoison reports for this defense (-2 points)."""
    reading = interpret_query(kg, Query(paraphrase(query.text)))
    again = set(local_search(kg, reading.topic, reading.plan)) if reading else set()
    removed = {i for i in retrieved if i not in again}
    return Verdict(removed=removed, suspicion={i: float(i in removed) for i in retrieved})


def provenance_filter(kg: KnowledgeGraph, query: Query, retrieved: Sequence[int], min_trust: float = 0.5) -> Verdict:
    docs_of = fact_documents(kg)
    trust: dict[str, float] = {}
    for doc in {kg.statements[i].doc for i in retrieved}:
        statements = [kg.statements[i] for i in kg.by_doc[doc]]
        corroborated = [not s.negated and len(docs_of.get(s.fact(), frozenset()) - {doc}) > 0 for s in statements]
        trust[doc] = float(np.mean(corroborated)) if corroborated else 0.0
    flagged = {d for d, t in trust.items() if t < min_trust}
    return _drop_documents(kg, retrieved, {d: 1.0 - t for d, t in trust.items()}, flagged)


BASELINES: dict[str, Defense] = {
    "ngram": ngram_filter,
    "cluster": cluster_filter,
    "paraphrase": paraphrase_filter,
    "provenance": provenance_filter,
}
