"""The white-box attacker's model of TDP: its own feature code and trained weights, run on the
attacker's copy of the corpus (the attacker knows the clean corpus, as GragPoison's strongest
setting assumes, and the defense, as an adaptive evaluation must).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attacks.graphrag.adaptive import Surrogate
from attacks.graphrag.diluted import SingleSubjects
from attacks.graphrag.targets import Target
from attacks.graphrag.tkpa import Repairs
from controllers.graphrag.accounts import (
    disputed_entity,
    entity_account,
    single_object_subjects,
    split_accounts,
)
from controllers.graphrag.candidates import Conflict, build_conflict, objects_at
from controllers.graphrag.features import QueryContext, candidate_features
from controllers.graphrag.pairs import contradicted
from controllers.graphrag.plausibility import RuleMiner
from controllers.graphrag.tdp import PairwiseRanker, anchored_ends
from environments.graphrag.corpus import Document, Fact
from environments.graphrag.dataset import Dataset
from environments.graphrag.kg import KnowledgeGraph, local_search
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.lexicon_pages import Pages, gazetteer

TIE = 1e-9  # TDP's tolerance for equal scores (controllers.graphrag.tdp.tied_winners)


def tdp_surrogate(ranker: PairwiseRanker, dataset: Dataset, strict: bool = False, disputes: bool = False,
                  paged_support: bool = False, witnessed: bool = False, single_accounts: bool = False,
                  own_account: bool = False, pairs: bool = False) -> Surrogate:
    """Score margin of the fake answer over the best other candidate at the contested step.
    With no conflict there, ``inf``; ``strict`` (``bridged``'s model): ``inf`` only when the
    fake is the one object read there, ``-inf`` when it is not read at all (``adaptive`` keeps
    the looser reading its shipped corpora were written with). ``disputes``: the defense
    abstains where the entity's own pages disagree (``tdp-disputed``), a lost step, ``-inf``;
    ``paged_support``, ``witnessed`` and ``single_accounts``: its stricter counts of independent
    support and of anchors; ``own_account``: only the objects the entity's own pages state compete
    (``tdp-disputed`` too); ``pairs``: a candidate whose pair carries an exclusive other relation is
    out, and a step with none left is refused (:func:`controllers.graphrag.pairs.contradicted`)."""
    extract = LexiconExtractor(sorted(dataset.table.phrases))  # the deployed extractor, known to the attacker
    clean = KnowledgeGraph(extract(dataset.documents))  # extended per corpus, never rebuilt
    pages = Pages(dataset.documents)  # its gazetteer, extended per call (the same as rebuilt over both)
    needed = ranker.needed()  # the defense's own fast path: the same scores, bit for bit

    def margin(docs: Sequence[Document], target: Target) -> float:
        kg = clean.extended(extract.read(docs, pages.extended(docs)))
        s, r = target.fact.head, target.fact.relation
        retrieved = set(local_search(kg, s, (r,)))
        conflict = build_conflict(kg, retrieved, s, r)
        if conflict is None:
            return math.inf if not strict or objects_at(kg, retrieved, s, r).keys() == {target.fake} else -math.inf
        if disputes and disputed_entity(kg, conflict):
            return -math.inf
        if pairs and (out := contradicted(kg, retrieved, conflict)):
            if any(c.answer == target.fake for c in out) or len(out) == len(conflict.candidates):
                return -math.inf  # the fake is out, or the step refused
            conflict = Conflict(s, r, [c for c in conflict.candidates if c not in out])
            if len(conflict.candidates) == 1:  # the one left is the answer: the fake's win, or it was never read
                return math.inf if conflict.candidates[0].answer == target.fake else -math.inf
        ctx = QueryContext(kg, retrieved, conflict, paged_support, witnessed,
                           split_accounts(kg, conflict) if single_accounts else frozenset())
        account = entity_account(kg, conflict, ctx.unanchoring) if own_account else frozenset()
        if account and target.fake not in account:
            return -math.inf  # the entity's own pages name only others: the fake loses whatever it scores
        scores = {c.answer: ranker.score(candidate_features(ctx, c, needed)) for c in conflict.candidates
                  if not account or c.answer in account}
        others = [v for a, v in scores.items() if a != target.fake]
        gap = scores.get(target.fake, -math.inf) - max(others, default=-math.inf)
        if abs(gap) > TIE:
            return gap
        # a tie goes to the candidate pages about more of its ends state (TDP's tie-break); one
        # left even removes nothing and leaves the fake to the reader, which beats losing it
        anchors = {c.answer: anchored_ends(kg, s, c, ctx.unanchoring) for c in conflict.candidates if c.answer in scores}
        rival = max((v for a, v in anchors.items() if a != target.fake), default=0)
        lead = anchors.get(target.fake, 0) - rival
        return TIE * lead / 2 if lead else TIE / 4

    return margin


def single_subjects(dataset: Dataset) -> SingleSubjects:
    """The diluting attacker's model of ``tdp-disputed``'s statistic: the defense's own counter
    (:func:`controllers.graphrag.accounts.single_object_subjects`: per relation, the subjects stated
    on their own pages and those given exactly one object there), on the deployed extractor's
    reading of the clean corpus extended by the given documents."""
    extract = LexiconExtractor(sorted(dataset.table.phrases))
    clean = KnowledgeGraph(extract(dataset.documents))
    pages = Pages(dataset.documents)

    def single(docs: Sequence[Document]) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
        return single_object_subjects(clean.extended(extract.read(docs, pages.extended(docs))) if docs else clean)

    return single


def rule_repairs(dataset: Dataset, rate: float) -> Repairs:
    """The white-box TKPA's model of ``tdp-plausible``: the defense's own rule miner on the
    attacker's extraction of the corpus as edited so far. For the fake claim it names the
    evidence that makes the claim implausible and a rewrite that makes the rules agree: a
    first step ``s - z`` of a strong path that reaches another object becomes ``s - z'`` for a
    ``z'`` whose second step reaches the fake; a stated ``r'(s, w)`` that a strong rule through
    the fake contradicts becomes ``r'(s, w*)`` with ``w*`` the rule's value."""
    extract = LexiconExtractor(sorted(dataset.table.phrases))
    clean = extract(dataset.documents)
    pages = gazetteer(dataset.documents)  # the context of every call

    def repairs(edited: Sequence[Document], target: Target) -> list[tuple[Fact, str, str]]:
        ids = {d.id for d in edited}
        kg = KnowledgeGraph([s for s in clean if s.doc not in ids] + extract.read(edited, pages))
        miner = RuleMiner(kg)
        s, r, fake = target.fact.head, target.fact.relation, target.fake
        out: list[tuple[Fact, str, str]] = []
        if fake not in miner.predicted(s, r, rate):
            for r1, f1, r2, f2 in sorted(miner.strong(r, rate)):
                towards = sorted(z for z, steps in miner.steps.items() if (r2, f2, fake) in steps and z != s)
                for rel, forward, z in sorted(miner.steps.get(s, ())):
                    if (rel, forward) == (r1, f1) and towards and z not in towards:
                        out.append((Fact(s, rel, z) if forward else Fact(z, rel, s), z, towards[0]))
        for other in sorted(miner.subjects):
            stated = miner.tails.get((s, other), set())
            for r1, f1, r2, f2 in sorted(miner.strong(other, rate) if stated and other != r else ()):
                implied = sorted(w for rel, f, w in miner.steps.get(fake, ()) if (rel, f) == (r2, f2) and w != s)
                if (r1, f1) == (r, True) and implied and not set(implied) & stated:
                    out += [(Fact(s, other, w), w, implied[0]) for w in sorted(stated)]
        return out

    return repairs
