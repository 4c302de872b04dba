"""The white-box attacker's model of TDP: its own feature code and trained weights, run on the
attacker's copy of the corpus (the attacker knows the clean corpus, as GragPoison's strongest
setting assumes, and the defense, as an adaptive evaluation must).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attacks.graphrag.adaptive import Surrogate
from attacks.graphrag.targets import Target
from controllers.graphrag.candidates import build_conflict
from controllers.graphrag.features import QueryContext, candidate_features
from controllers.graphrag.tdp import PairwiseRanker
from environments.graphrag.corpus import Document
from environments.graphrag.dataset import Dataset
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.lexicon import LexiconExtractor


def tdp_surrogate(ranker: PairwiseRanker, dataset: Dataset) -> Surrogate:
    """Score margin of the fake answer over the best other candidate at the contested step."""
    extract = LexiconExtractor(sorted(dataset.table.phrases))  # the deployed extractor, known to the attacker
    clean = extract(dataset.documents)

    def margin(docs: Sequence[Document], target: Target) -> float:
        kg = KnowledgeGraph(clean + extract(docs, context=[*dataset.documents, *docs]))
        s, r = target.fact.head, target.fact.relation
        retrieved = set(local_search(kg, s, (r,)))
        conflict = build_conflict(kg, retrieved, s, r)
        if conflict is None:
            return math.inf
        ctx = QueryContext(kg, retrieved, conflict)
        scores = {c.answer: ranker.score(candidate_features(ctx, c)) for c in conflict.candidates}
        others = [v for a, v in scores.items() if a != target.fake]
        return scores.get(target.fake, -math.inf) - max(others, default=-math.inf)

    return margin
