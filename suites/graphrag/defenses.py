"""The named retrieval defenses of the GraphRAG workload.

Lives in the composition layer because TDP's ranker is trained on poisoned worlds, which puts an
adversary (attacks/graphrag) and an overseer (controllers/graphrag) together.
"""

from __future__ import annotations

from typing import Any

from environments.graphrag.pipeline import Defense

DEFENSES = ("none", "ngram", "cluster", "paraphrase", "provenance", "tdp", "tdp-static", "tdp-raw", "tdp-mix", "tdp-set",
            "tdp-plausible", "tdp-diverse", "tdp-abstain", "tdp-disputed",
            "tdp-paired")

# tdp-plausible checks only relations whose claims close a triangle at least this often in the
# graph at hand; chosen on development worlds 4-7 (docs/graphrag.md).
PLAUSIBILITY_RATE = 0.6
# tdp-diverse trusts an uncontested claim that at least this many documents of distinct
# provenance state; chosen on development worlds 4-7 (docs/graphrag.md).
MIN_SOURCES = 2
# variants of tdp with its ranker and one more rule: a losing value co-asserted with the winner is
# kept (tdp-set); the triangle-regularity check (tdp-plausible) or provenance diversity
# (tdp-diverse) at uncontested steps; abstention at a step an edit left a trace on (tdp-abstain) or
# whose entity's own pages disagree on a single-valued relation (tdp-disputed, issue #51; it also
# counts one support path per witnessing page and no anchor on a page giving a single-valued step two
# objects, session 15)
TDP_CHECKS: dict[str, dict[str, Any]] = {  # tdp_defense keyword arguments
    "tdp-set": {"keep_sets": True},
    "tdp-plausible": {"plausibility": PLAUSIBILITY_RATE},
    "tdp-diverse": {"min_sources": MIN_SOURCES},
    "tdp-abstain": {"abstain": True},
    "tdp-disputed": {"disputes": True, "paged_support": True, "witnessed": True, "single_accounts": True,
                     "own_account": True},
}
# tdp-disputed, and where the graph gives nearly every pair of entities one relation (Kinships), a
# candidate whose pair already carries another is out (session 26, controllers/graphrag/pairs.py)
TDP_CHECKS["tdp-paired"] = {**TDP_CHECKS["tdp-disputed"], "pairs": True}


def make_defense(name: str) -> Defense | None:
    """The defense called ``name`` (``none`` -> ``None``); TDP variants train on first use."""
    if name == "none":
        return None
    if name in ("tdp", "tdp-static", "tdp-raw", "tdp-mix") or name in TDP_CHECKS:
        from controllers.graphrag.tdp import tdp_defense
        from suites.graphrag.training import trained_ranker

        if name in TDP_CHECKS:  # tdp's own ranker, plus the variant's check
            return tdp_defense(trained_ranker("tdp"), **TDP_CHECKS[name])
        return tdp_defense(trained_ranker(name))
    from controllers.graphrag.baselines import BASELINES

    if name not in BASELINES:
        raise KeyError(f"unknown defense {name!r}; defenses: {', '.join(DEFENSES)}")
    return BASELINES[name]
