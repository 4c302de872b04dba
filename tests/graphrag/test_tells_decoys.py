"""The tell test scores the attacker pages that carry the attack's claims (issue #50 item 3).

An attacker could lower an AUC counted over every attacker page by publishing decoys: pages that
state nothing of its own (true facts, what clean pages say). A decoy does nothing for the attack
but hide its other pages, so the test scores clean pages against the pages carrying one of the
attack's claims (:func:`suites.graphrag.tells.attack_claims`, from the attack's own record: its
plan and the gold claims of its pages, labels only); every attacker page stays ``scoring="all"``.
"""

from dataclasses import replace
from functools import lru_cache

from attacks.graphrag.scenario import poisoned_index
from environments.graphrag.corpus import Document
from environments.graphrag.world import generate_world
from suites.graphrag.tells import Attacked, attack_claims, attack_pages, attacker_tell_auc


@lru_cache(maxsize=8)
def _attacked(seed, attack, decoys=0):
    """World ``seed`` after ``attack`` (the length dress: what the graph holds per page tells), with
    ``decoys`` of its clean pages that state nothing on a contested fact published as the attacker's."""
    data = generate_world(seed)
    poisoned = poisoned_index(data, attack, targets=12, seed=seed, community_method="none")
    contested = {(t.fact.head, t.fact.relation) for t in poisoned.plan.targets}
    free = [k for k, d in poisoned.index.documents.items() if d.origin == "clean" and not any(
        (c.fact.head, c.fact.relation) in contested for _, c in d.claims)]
    # spread evenly over the published order (an id is a keyed hash: the first ones would share low ids)
    decoy = {free[i * len(free) // decoys] for i in range(decoys)} if decoys else set()
    assert len(decoy) == decoys
    docs = {k: Document(d.id, d.title, d.sentences, origin="poison") if k in decoy else d
            for k, d in poisoned.index.documents.items()}
    index = replace(poisoned.index, documents=docs)
    return data, poisoned.plan, Attacked(index, attack_claims(data, poisoned.plan, index)), frozenset(decoy)


def test_decoy_pages_lower_the_all_pages_auc_but_not_the_claim_pages_auc():
    """40 decoys beside ``gragpoison``'s 60 pages: counted as attacker pages ("all", the test
    before session 14) they pull the AUC down towards chance as much as an attacker likes; the
    default scores none of them and keeps the undecoyed figure."""
    _, _, padded, decoy = _attacked(1, "gragpoison", 40)
    docs = list(padded.index.documents.values())
    scored = {d.id for d, s in zip(docs, attack_pages(padded.index, padded.claims), strict=True) if s}
    assert not scored & decoy and len(scored) >= 0.9 * 60  # the length dress may cut a page's claim
    assert attack_pages(padded.index, padded.claims, "all").sum() == sum(d.origin != "clean" for d in docs)

    train, plain = _attacked(0, "gragpoison", 40)[2], _attacked(1, "gragpoison")[2]
    before = attacker_tell_auc([train], [plain], resamples=50, scoring="all")[0]
    old = attacker_tell_auc([train], [padded], resamples=50, scoring="all")[0]
    new = attacker_tell_auc([train], [padded], resamples=50)[0]
    assert before >= 0.95  # the length dress's pages hold fewer statements than clean pages (0.97)
    assert old <= before - 0.1, (before, old)
    assert new >= before - 0.02, (before, new)


def test_the_attacks_claims_are_its_fakes_denials_fabrications_and_restatements():
    """``restate`` writes one page with the fake claim per target and spends the rest on pages
    restating the truth (its lever against TDP): with ``restated`` every such page is scored,
    without it only the fake's (where no clean page gives the fake too). A claim is the attack's when it is on a contested fact or false
    and said by no clean page; decoys copied from clean pages carry none."""
    data, plan, attacked, decoy = _attacked(0, "restate", 10)
    fakes = {(t.fact.head, t.fact.relation, t.fake) for t in plan.targets}
    docs = list(attacked.index.documents.values())
    written = {d.id for d in docs if d.origin != "clean"} - decoy
    said = {(c.fact, c.negated) for d in data.documents for _, c in d.claims}
    # a fake can be a value clean pages give too (a natural conflict: 1 of 12 targets here)
    with_fake = {d.id for d in docs if d.id in written and any(
        (c.fact.head, c.fact.relation, c.fact.tail) in fakes and (c.fact, c.negated) not in said for _, c in d.claims)}
    strict = attack_claims(data, plan, attacked.index, restated=False)
    assert strict and all(negated or fact not in set(data.facts) for fact, negated in strict)
    kept = {d.id for d, s in zip(docs, attack_pages(attacked.index, strict), strict=True) if s}
    assert kept == with_fake and len(plan.targets) - 1 <= len(kept) <= len(plan.targets)
    restated = {d.id for d, s in zip(docs, attack_pages(attacked.index, attacked.claims), strict=True) if s}
    assert restated == written and len(written) == 5 * len(plan.targets)  # none of the decoys


def test_the_tells_cli_names_its_scoring_and_counts_the_pages_it_scores(capsys):
    """``--score`` (claims by default, new, all): the report names it and counts the attacker pages
    scored among those published; ``restate``'s restatements are claims, not new ones."""
    import re

    from suites.graphrag.tells import main

    counts = {}
    for score in ("claims", "new"):
        assert main(["--cv", "0,1", "--attacks", "restate", "--score", score]) == 0
        out = capsys.readouterr().out
        assert f"Attacker pages scored: {score}" in out
        counts[score] = tuple(map(int, re.search(r"\| (\d+) of (\d+) \|", out).groups()))
    assert counts["claims"] == (120, 120) and counts["new"][1] == 120 and 20 <= counts["new"][0] <= 24
