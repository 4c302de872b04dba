"""The oversight controllers on live runs from the command line (issue 54 item 7): a ``--controller``
factory that fits a named policy (the action-conditioned controller, a band router, the cost-derived
rule, any fitted controller ``evaluate`` reports) on a committed development dataset and decides
live at that dataset's checkpoints (controllers/oversight/live.py).

A one-file factory, as for the control workload's ``ac``::

    from suites.oversight.live_factory import factory
    ac = factory("suites/oversight/data/contracts-dev.jsonl.gz", policy="action-conditioned")

then ``agentbed run contracts --agent naive --controller file.py:ac``. The policy is fitted once per
process, at the first episode, on development games only (a held-out or unregistered unit is refused,
as ``evaluate --train`` refuses it); ``budget`` is applied to the training rows as ``evaluate
--budget`` applies it, and live: an intervention hands the episode to the target's intervention agent
built on the episode's environment, and the controller stops the episode when that agent has used its
step budget (the build's, or the one given here), as its branches were capped, so the intervention
means live what it meant in the fit; ``shadow=True`` only records. The episodes must be the base
agent's the dataset was built from (its suite, agent and seeds) for the features to mean the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentbed.errors import UsageError
from controllers.oversight.budget import parse_assignments, with_budgets
from controllers.oversight.evaluate import load_checkpoints
from controllers.oversight.live import OversightController, live_controller
from controllers.oversight.merge import load_parts
from controllers.oversight.policies import ForestSettings, default_controllers
from controllers.oversight.utility import Costs
from suites.oversight.benchmarks import load_target
from suites.oversight.build import recorded_config
from suites.oversight.seeds import check_split

NOT_DEPLOYABLE = ("oracle",)  # needs every action's outcome at the checkpoint


def deployable() -> list[str]:
    """The names a live policy may have: every fitted controller but the oracle."""
    return [c.name for c in default_controllers() if c.name not in NOT_DEPLOYABLE]


def factory(train: str | Path | Sequence[str | Path], policy: str = "action-conditioned", budget: str = "",
            shadow: bool = False, trees: int = ForestSettings.n_estimators) -> Callable[[Any], OversightController]:
    """A ``--controller`` factory: ``policy`` fitted on ``train`` (a development dataset, or its
    parts), deciding live on each episode's environment (see the module's docstring)."""
    paths = [str(train)] if isinstance(train, str | Path) else [str(p) for p in train]
    if policy not in deployable():
        raise UsageError(f"oversight live controller: no policy {policy!r}; policies: {', '.join(deployable())}")
    budgets = parse_assignments(budget, "oversight live controller budget", int)
    fitted: dict[str, Any] = {}

    def fit() -> dict[str, Any]:
        data = with_budgets(load_parts(paths), budgets)
        check_split(data.provenance, f"oversight live controller: {' '.join(paths)}", "fit",
                    sorted({r["game"] for r in data.rows}))
        checkpoints, _ = load_checkpoints(data)
        chosen = next(c for c in default_controllers(ForestSettings(n_estimators=trees)) if c.name == policy)
        chosen.fit(checkpoints)
        prov = data.provenance
        steps = dict((prov.get("target_notes") or {}).get("action_step_costs") or {})
        target = load_target(prov["config"]["benchmark"], **recorded_config(prov).target_options)  # as built
        return {"policy": chosen, "provenance": prov, "costs": Costs().with_action_steps(steps),
                "target": dataclasses.replace(target, budgets={**target.budgets, **budgets})}

    def make(setup: Any) -> OversightController:
        if not fitted:
            fitted.update(fit())
        prov = fitted["provenance"]
        return live_controller(fitted["policy"], prov, fitted["target"], setup.env, fitted["costs"],
                               prov["primary_intervention"], shadow=shadow)

    return make
