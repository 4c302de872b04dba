"""Choosing a benchmark configuration on development data: is there room for control?

A configuration is an intervention setting (an expert's slip rate, fixed at build time; its
step budget and its cost per step, applied at evaluation time) and the dataset built with it.
Room for control is what no prefix-blind policy can have: the regret of the best single
action, relative to the oracle's utility. The paper's claim can only be tested where that is
large and the primary intervention is sometimes, not always, the best action (issue 34: on
ALFWorld with a free, unlimited, flawless expert, always deferring came within 0.016 of the
oracle). :func:`choose` applies the rule stated in docs/oversight.md before any held-out game
was built, on development games only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from controllers.oversight.budget import with_budgets
from controllers.oversight.dataset import Dataset
from controllers.oversight.evaluate import load_checkpoints
from controllers.oversight.utility import DEFAULT_COSTS, Costs

MAX_DEFER_SHARE = 0.9  # always deferring must reach less than 90% of the oracle's utility
PRIMARY_BEST_RANGE = (0.25, 0.75)  # the primary intervention is best at some, not all, checkpoints


@dataclass(frozen=True)
class Candidate:
    label: str  # the dataset's name (e.g. its slip rate)
    budget: int | None
    step_cost: float  # extra cost per step of the primary intervention


def measure(dataset: Dataset, candidate: Candidate, costs: Costs = DEFAULT_COSTS) -> dict[str, Any]:
    """Room for control of one candidate: oracle and always-defer utility, the best fixed
    action and its regret, and the shares of the oracle's actions."""
    primary = dataset.provenance.get("primary_intervention", "")
    data = with_budgets(dataset, {primary: candidate.budget} if candidate.budget else {})
    cps, _ = load_checkpoints(data)
    u = cps.utilities(costs.with_action_steps({cps.primary: candidate.step_cost} if candidate.step_cost else {}))
    oracle = u.max(axis=1)
    fixed = u.mean(axis=0)
    best_fixed = int(np.argmax(fixed))
    picks = np.argmax(u, axis=1)
    return {"label": candidate.label, "budget": candidate.budget, "step_cost": candidate.step_cost,
            "checkpoints": len(cps), "oracle_utility": float(oracle.mean()),
            "defer_utility": float(u[:, cps.choices.index(cps.primary)].mean()),
            "defer_share_of_oracle": float(u[:, cps.choices.index(cps.primary)].mean() / oracle.mean())
            if oracle.mean() > 0 else float("nan"),
            "best_fixed": cps.choices[best_fixed], "best_fixed_regret": float(oracle.mean() - fixed[best_fixed]),
            "room": float((oracle.mean() - fixed[best_fixed]) / oracle.mean()) if oracle.mean() > 0 else float("nan"),
            "oracle_actions": {a: float(np.mean(picks == j)) for j, a in enumerate(cps.choices)},
            "primary": cps.primary}


def choose(measured: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The candidate with the most room for control among those where always deferring reaches
    less than 90% of the oracle's utility and the primary intervention is the oracle's action at
    25-75% of the checkpoints; ties: the earlier candidate (list the paper-like ones first)."""
    admissible = [m for m in measured if m["defer_share_of_oracle"] < MAX_DEFER_SHARE
                  and PRIMARY_BEST_RANGE[0] <= m["oracle_actions"][m["primary"]] <= PRIMARY_BEST_RANGE[1]]
    return max(admissible, key=lambda m: m["room"], default=None)
