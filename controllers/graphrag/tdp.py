"""TDP: topology-based defense against poisoning of GraphRAG.

For each query, TDP builds the conflicting candidate subgraphs that support different answers
(:mod:`controllers.graphrag.candidates`), scores each with a pairwise topology ranker over
raw and provenance-aware features (:mod:`controllers.graphrag.features`), and removes the
losing candidates' unique edges before the reader answers. The ranker is RankNet (Burges et
al., "Learning to Rank using Gradient Descent", ICML 2005) with a linear scorer: a logistic
regression without intercept on feature differences phi(A) - phi(B), with each swapped pair
as a negative. It is trained on generated worlds (:mod:`suites.graphrag.training`) and
applied to other graphs without retraining.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.linear_model import LogisticRegression

from controllers.graphrag.accounts import disputed_entity, entity_account, split_accounts
from controllers.graphrag.candidates import (
    Candidate,
    Conflict,
    document_subject,
    interpret_query,
    off_subject_statement,
    walk_plan,
)
from controllers.graphrag.diversity import undersourced_claims
from controllers.graphrag.features import FEATURES, QueryContext, candidate_features, retracting_docs
from controllers.graphrag.pairs import contradicted
from controllers.graphrag.plausibility import implausible_claims
from environments.graphrag.kg import KnowledgeGraph
from environments.graphrag.pipeline import Defense, Query, Verdict


@dataclass
class PairwiseRanker:
    weights: np.ndarray
    features: tuple[str, ...]

    def mask(self) -> np.ndarray:
        return np.array([FEATURES.index(f) for f in self.features])

    def score(self, phi: np.ndarray) -> float:
        if self._mask is None:
            self._mask = self.mask()
        return float(phi[self._mask] @ self.weights)

    def needed(self) -> frozenset[str]:
        """The features this ranker weighs (a zero weight makes a feature's value irrelevant)."""
        return frozenset(f for f, w in zip(self.features, self.weights, strict=True) if w != 0)

    _mask: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def to_dict(self) -> dict[str, float]:
        return dict(zip(self.features, map(float, self.weights), strict=True))


def fit_pairwise(pairs: Sequence[tuple[np.ndarray, np.ndarray]], features: Sequence[str] = FEATURES,
                 c: float = 1.0, nonnegative: bool = False) -> PairwiseRanker:
    """Fit on (better, worse) feature pairs: RankNet with a linear scorer. ``nonnegative``
    bounds every weight at zero from below (L-BFGS-B on the same L2-regularised logistic
    loss), so the score is monotone in each feature."""
    if not pairs:
        raise ValueError("no training pairs")
    idx = np.array([FEATURES.index(f) for f in features])
    diffs = np.array([a[idx] - b[idx] for a, b in pairs])
    if nonnegative:
        return PairwiseRanker(_fit_nonnegative(diffs, c), tuple(features))
    x = np.vstack([diffs, -diffs])
    y = np.concatenate([np.ones(len(diffs)), np.zeros(len(diffs))])
    model = LogisticRegression(fit_intercept=False, C=c, max_iter=2000).fit(x, y)
    return PairwiseRanker(model.coef_[0].copy(), tuple(features))


def _fit_nonnegative(diffs: np.ndarray, c: float) -> np.ndarray:
    """argmin over w >= 0 of C * sum log(1 + exp(-d.w)) over both orientations + |w|^2 / 2
    (the objective scikit-learn's logistic regression minimises, with bounds)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        margin = diffs @ w
        value = 2 * c * float(np.logaddexp(0.0, -margin).sum()) + 0.5 * float(w @ w)
        grad = -2 * c * diffs.T @ expit(-margin) + w
        return value, grad

    start = np.zeros(diffs.shape[1])
    result = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * diffs.shape[1],
                      options={"maxiter": 2000, "gtol": 1e-10})
    return np.round(result.x, 12)


def tdp_defense(ranker: PairwiseRanker, *, keep_sets: bool = False, plausibility: float | None = None,
                min_sources: int | None = None, abstain: bool = False, disputes: bool = False,
                paged_support: bool = False, witnessed: bool = False, single_accounts: bool = False,
                own_account: bool = False, pairs: bool = False) -> Defense:
    needed = ranker.needed()

    def defend(kg: KnowledgeGraph, query: Query, retrieved: Sequence[int]) -> Verdict:
        return resolve_conflicts(kg, query, retrieved, ranker, keep_sets=keep_sets, plausibility=plausibility,
                                 min_sources=min_sources, needed=needed, abstain=abstain, disputes=disputes,
                                 paged_support=paged_support, witnessed=witnessed, single_accounts=single_accounts,
                                 own_account=own_account, pairs=pairs)

    return defend


def co_asserting_docs(kg: KnowledgeGraph, loser: Candidate, winner: Candidate) -> set[str]:
    """Documents asserting both the loser's and the winner's object and negating neither: a
    source that lists several values ("offices in A, B and C") says that both hold."""
    negating = {kg.statements[i].doc for i in loser.negations | winner.negations}
    return (loser.claim_docs(kg) & winner.claim_docs(kg)) - negating


def spare_followed(statements: set[int], followed: Collection[int]) -> set[int]:
    """``statements`` less the claims the walk followed at its earlier steps (``followed``: the
    winners' claims at a conflict, the claims an uncontested step kept). A step's decision judges
    its own claims only; a claim the walk followed is the reader's answer at its own step, not
    evidence of a later step's loser, whatever path it also lies on, so no later pruning removes
    it. Issue #51 item 1 (a defense that never hurts the truth); session 20's trace (world 1000
    q11, ``gragpoison``): the truth lost a tie at the second hop, and the first hop's winning claim,
    on the clean page about its answer, went with the loser's support edges."""
    return statements - set(followed)


def attributable_unique_edges(kg: KnowledgeGraph, alive: set[int], loser: Candidate, winner: Candidate,
                              keep: set[str] = frozenset(), followed: Collection[int] = ()) -> set[int]:
    """The loser's unique edges that its own sources account for: its claims and negations,
    and support edges from documents that assert the loser's claim or whose retrieved
    statements all lie in the loser's unique edges. A clean page that merely also mentions
    the losing answer keeps its other statements, so dense real graphs lose little evidence.
    Nothing is removed from the documents in ``keep``; a claim in ``followed`` is no unique edge
    of the loser (:func:`spare_followed`), and a page stating one is not the loser's alone."""
    doc_of = kg.doc_of
    unique = spare_followed(loser.edges - winner.edges, followed)
    if keep:
        unique = {i for i in unique if doc_of[i] not in keep}
    own = loser.claim_docs(kg) - keep
    docs = {doc_of[i] for i in unique} - own
    own |= {d for d in docs if all(j in unique for j in kg.by_doc[d] if j in alive)}
    return {i for i in unique if i in loser.claims or i in loser.negations or doc_of[i] in own}


def anchored_ends(kg: KnowledgeGraph, entity: str, cand: Candidate, unanchoring: Collection[str] = ()) -> int:
    """The claim's ends (its entity, its object) that a document stating the claim is about
    (:func:`document_subject`): where an encyclopedia keeps the fact. 0, 1 or 2, a count more
    evidence can only raise; ends, not documents, so writing five pages about the entity counts
    as one (issue #51). A page that retracts the claim (:func:`retracting_docs`) is no anchor,
    nor is a page in ``unanchoring`` (:func:`split_accounts`)."""
    pages = cand.claim_docs(kg) - retracting_docs(kg, cand) - set(unanchoring)
    return len({document_subject(kg, d) for d in pages} & {entity, cand.answer})


def tied_winners(kg: KnowledgeGraph, conflict: Conflict, scores: Sequence[float],
                 tol: float = 1e-9, unanchoring: Collection[str] = (),
                 account: Collection[str] = ()) -> tuple[list[Candidate], float]:
    """The candidates the ranker keeps, and the best score: those scoring it (within ``tol``) and,
    among tied ones, those stated on pages about more of the claim's ends
    (:func:`anchored_ends`). A tie that remains is no evidence: none of the tied
    candidates loses evidence and the reader weighs them as it would undefended. Issue #51:
    breaking ties by name let a framing attack win where the undefended reader kept the truth;
    leaving every tie to the reader hands it to whoever wrote most documents. With an
    ``account`` (:func:`entity_account`), only the candidates it names compete, and the best
    score is the best among them (the one a loser's suspicion is measured from)."""
    named = [(c, sc) for c, sc in zip(conflict.candidates, scores, strict=True) if not account or c.answer in account]
    best = max(sc for _, sc in named)
    top = [c for c, sc in named if sc >= best - tol]
    if len(top) > 1:
        anchors = [anchored_ends(kg, conflict.entity, c, unanchoring) for c in top]
        top = [c for c, a in zip(top, anchors, strict=True) if a == max(anchors)]
    return top, best


def tampered_step(kg: KnowledgeGraph, entity: str, claims: Iterable[set[int]]) -> bool:
    """Some claim of a step (``entity``, relation) sits in a page about a third entity
    (:func:`off_subject_statement`): clean pages state a neighbour's fact only beside their own
    link to it, an edit of the old object's page (TKPA) leaves the claim without one."""
    return any(off_subject_statement(kg, entity, i) for ids in claims for i in ids)


def merged(candidates: Sequence[Candidate]) -> Candidate:
    """One candidate holding the evidence of several (the tied winners a loser is compared with)."""
    if len(candidates) == 1:
        return candidates[0]
    out = Candidate("|".join(c.answer for c in candidates))
    for c in candidates:
        out.claims |= c.claims
        out.negations |= c.negations
        out.support |= c.support
        out.support_nodes |= c.support_nodes
    return out


def resolve_conflicts(kg: KnowledgeGraph, query: Query, retrieved: Sequence[int], ranker: PairwiseRanker,
                      subject_check: bool = True, keep_sets: bool = False,
                      plausibility: float | None = None, min_sources: int | None = None,
                      every_feature: bool = False, needed: frozenset[str] | None = None,
                      abstain: bool = False, disputes: bool = False, paged_support: bool = False,
                      witnessed: bool = False, single_accounts: bool = False, own_account: bool = False,
                      pairs: bool = False) -> Verdict:
    """Walk the query's plan; at every conflicting step keep the top-ranked candidate and
    remove the other candidates' unique edges; at an uncontested step remove a claim that a
    page about a third entity states (:func:`off_subject_statement`, against TKPA's edits; only
    that statement, never the claim's other attestations).
    ``keep_sets``: leave a losing candidate's evidence in documents that also assert the winner
    (:func:`co_asserting_docs`: a multi-valued relation's listing is not a conflict).
    ``plausibility``: also remove an uncontested claim that breaks a triangle regularity that
    the graph's claims of its relation close at least this often (:func:`implausible_claims`).
    ``min_sources``: also remove an uncontested claim that fewer documents of distinct
    provenance state (:func:`undersourced_claims`).
    ``abstain``: at a step where a page about a third entity states one of the claims
    (:func:`off_subject_statement`: the trace an edit of the old object's page leaves), remove
    every claim of the step, contested or not, so the reader answers nothing rather than what
    the edited evidence says (:func:`tampered_step`).
    ``disputes``: at a conflict whose entity's own pages disagree (:func:`disputed_entity`),
    remove every claim of the step likewise. ``paged_support``: a support link counts as
    independent only where a page about one of its ends states it (:class:`QueryContext`);
    ``witnessed``: each page witnesses one support path at most (:func:`witnessed_paths`);
    ``single_accounts``: a page giving the entity two objects of a single-valued step anchors
    neither (:func:`split_accounts`); ``own_account``: on a single-valued step, only the objects the
    entity's own pages state compete, when they state any (:func:`entity_account`); ``pairs``: a
    candidate whose pair the graph gives an exclusive other relation is out, and a step whose every
    candidate is removes every claim (:func:`controllers.graphrag.pairs.contradicted`).
    No step removes a claim the walk followed at an earlier one (:func:`spare_followed`).
    Suspicion of a statement: how far its candidate's score falls below the winner's (1 for
    an off-subject claim). Only the features the ranker weighs (``needed``, by default
    :meth:`PairwiseRanker.needed`) are computed, unless ``every_feature`` (the reference the
    fast path is tested against)."""
    verdict = Verdict()
    alive = set(retrieved)
    followed: set[int] = set()  # the claims the walk followed so far (:func:`spare_followed`)
    needed = None if every_feature else (ranker.needed() if needed is None else needed)

    def settle(conflict: Conflict) -> list[str]:
        if (abstain and tampered_step(kg, conflict.entity, [c.claims for c in conflict.candidates])
                or disputes and disputed_entity(kg, conflict)):
            remove({i for c in conflict.candidates for i in c.claims})
            alive.difference_update(verdict.removed)
            return []
        if pairs and (out := contradicted(kg, alive, conflict)):
            conflict = Conflict(conflict.entity, conflict.relation, [c for c in conflict.candidates if c not in out])
            verdict.removed |= {i for c in out for i in spare_followed(c.claims, followed)}
            verdict.suspicion.update({i: 1.0 for c in out for i in c.claims})
            alive.difference_update(verdict.removed)
            if len(conflict.candidates) < 2:
                followed.update(i for c in conflict.candidates for i in c.claims)
                return [c.answer for c in conflict.candidates]
        ctx = QueryContext(kg, alive, conflict, paged_support, witnessed,
                           split_accounts(kg, conflict) if single_accounts else frozenset())
        scores = [ranker.score(candidate_features(ctx, c, needed)) for c in conflict.candidates]
        account = entity_account(kg, conflict, ctx.unanchoring) if own_account else frozenset()
        top, best = tied_winners(kg, conflict, scores, unanchoring=ctx.unanchoring, account=account)
        winner = merged(top)
        suspicion = verdict.suspicion
        for c, sc in zip(conflict.candidates, scores, strict=True):
            gap = max(0.0, best - sc)  # so this is max(old or 0.0, gap) per edge
            suspicion.update({i: gap for i in c.edges if suspicion.get(i, -1.0) < gap})
            if all(c is not w for w in top):
                keep = co_asserting_docs(kg, c, winner) if keep_sets else set()
                verdict.removed |= attributable_unique_edges(kg, alive, c, winner, keep, followed)
        alive.difference_update(verdict.removed)
        followed.update(i for w in top for i in w.claims)
        return [w.answer for w in top]

    def remove(claims: set[int]) -> None:  # an uncontested check's removal: full suspicion
        claims = spare_followed(claims, followed)
        verdict.removed.update(claims)
        verdict.suspicion.update(dict.fromkeys(claims, 1.0))

    def check(entity: str, relation: str, objects: dict[str, set[int]]) -> None:
        if subject_check:
            uncontested(entity, relation, objects)
        followed.update(i for claims in objects.values() for i in claims if i in alive)

    def uncontested(entity: str, relation: str, objects: dict[str, set[int]]) -> None:
        if abstain and tampered_step(kg, entity, objects.values()):
            remove({i for claims in objects.values() for i in claims})
        for claims in objects.values():
            # only the off-subject statements themselves (issue #51): whether one is off-subject
            # depends on its own document alone, so a page restating a true claim about a third
            # entity loses its own statement and never deletes the claim from other pages
            remove({i for i in claims if off_subject_statement(kg, entity, i)})
        if plausibility is not None:
            remove(implausible_claims(kg, entity, relation, objects, plausibility))
        if min_sources is not None:
            remove(undersourced_claims(kg, entity, relation, objects, min_sources))
        alive.difference_update(verdict.removed)

    reading = interpret_query(kg, query)
    if reading is not None:
        walk_plan(kg, alive, reading.topic, reading.plan, settle, check)
    return verdict
