"""ALFWorld as a branching benchmark, through the public factories of environments.alfworld.

Games are the generated ALFWorld games (the first ``games`` of them); base agents are the
scripted flawed agents. The interventions (docs/oversight.md, "The interventions"): "expert"
defers to ALFWorld's handcoded expert (its move bookkeeping fixed unless ``expert_as_shipped``),
slipping at rate ``expert_noise`` per step and given up after ``expert_budget`` steps;
"planner" hands over to a flawless planner that sees only the task and the current
observation; "reflect" is the agent's self-repair by its mechanisms alone (goal re-read, loop
cleared, re-exploration); "reflect-cut" adds the assumed cut of every flaw rate to a quarter (a
labelled assumption, not a mechanism; before issue 54 it was what "reflect" meant, and datasets
recorded that way keep it: ``reflect="mechanism+cut"``). The environment cannot snapshot, so
every branch replays the prefix (verified), with Python's ``random`` seeded first (the expert
draws from it).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from agentbed.agents.base import Agent
from agentbed.errors import UsageError
from agentbed.streams import checked_seeding
from controllers.oversight.target import BranchTarget, Intervention
from suites.oversight.benchmarks.alfworld_progress import PROGRESS_FEATURE_NAMES, progress_features

DEFAULT_GAMES = 40
BASE_FLAWS = ("noisy", "looping", "forgetful", "mixed", "detour")
INTERVENTIONS = ("expert", "planner", "reflect", "reflect-cut")
DEFAULT_MENU = ("expert", "planner", "reflect")
# what the intervention named "reflect" does: its mechanisms alone (the default), or, as recorded
# by datasets built before issue 54, with the flaw-rate cut
REFLECT_MODES = ("mechanism", "mechanism+cut")
# The benchmark's configurations (docs/oversight.md, "The interventions"): named settings of the
# expert's slip rate, budget and cost per step. "costly-noisy", the default, has the noisy expert
# issue 34 asks for: its slip rate is the wasted-step share of an expert without the game's hidden
# state (the flawless planner), measured on development games 0-19 of seed 0 by
# suites/oversight/expert_error.py and recorded in suites/oversight/data/expert-error-s0-20games-legacy-seeding.json
# (0.057, rounded to 0.06; a test ties the two; measured with the planner's exploration order drawn from
# one stream shared by every game; re-measured with per-game streams, expert-error-s0-20games.json:
# 0.147 [-0.067, 0.345], which holds 0.06; the regime keeps 0.06, every costly-noisy dataset's); its 10-step budget and no extra step cost were
# chosen by controllers/oversight/regime.choose on 8 development games of seed 0 built at that slip
# rate, among budgets none/20/15/10/8/6/5/4 and extra step costs 0/0.01/0.03 (`agentbed oversight
# regimes`). "costly" is the same without slips: the default before the slip rate was measured,
# kept to reproduce the numbers measured with it. "free" is the setting of public reconstructions of
# the paper's protocol (its text states none): a flawless expert, no budget, no per-step charge (always deferring then comes within a few percent of the oracle).
REGIMES: dict[str, dict[str, Any]] = {
    "costly": {"expert_budget": 10},
    "costly-noisy": {"expert_budget": 10, "expert_noise": 0.06},
    "free": {},
}
DEFAULT_REGIME = "costly-noisy"


def _flawed(make: Callable[..., Agent], flaw: str, seeding: str) -> Callable[[int], Agent]:
    return lambda seed: make(flaw, seed, seeding=seeding)


def describe_regime(name: str) -> str:
    """One line naming a configuration's intervention settings (for tables and the demo)."""
    r = REGIMES[name]
    parts = [f"slipping at {r['expert_noise']:g} a step" if r.get("expert_noise") else "never slipping",
             f"giving up after {r['expert_budget']} steps" if r.get("expert_budget") else "unlimited",
             f"{r['expert_step_cost']:g} extra per expert step" if r.get("expert_step_cost") else "no extra step cost"]
    return (f"ALFWorld's expert (bookkeeping fixed) {', '.join(parts)}; planner and reflect; the costs of "
            "public reconstructions of the paper's protocol (intervention 0.05, step 0.01, failure -1)")


def target(games: int = DEFAULT_GAMES, games_seed: int = 0, expert_as_shipped: bool = False,
           expert_noise: float = 0.0, expert_budget: int | None = None,
           interventions: Sequence[str] | str = DEFAULT_MENU, expert_step_cost: float = 0.0,
           regime: str = "", reflect: str = "mechanism", base_seeding: str = "game", **options: Any) -> BranchTarget:
    """The first ``games`` games of generator ``games_seed`` (at most 320 per seed).

    ``expert_as_shipped``: ALFWorld's expert exactly as released, which never learns that a
    "move O to R" put O down and stalls (environments/alfworld/tw.py); only for reproducing the
    numbers measured before the fix was the default. ``expert_noise``: the expert's slip rate per
    step; ``expert_budget``: the steps it may take before it gives up (the branch ends, failed).
    ``interventions``: the menu's interventions, a subset of ``INTERVENTIONS`` in that order.
    ``expert_step_cost``: the extra cost per expert step the evaluation charges by default
    (recorded in the dataset's provenance; the utility is computed at evaluation time).
    ``regime``: the name of the REGIMES entry these values came from, recorded only.
    ``reflect``: one of REFLECT_MODES, what "reflect" does ("reflect-cut" always cuts).
    ``base_seeding``: how the base agents seed their flaws and stated-risk noise, one of
    agentbed.streams.SEEDINGS: "game" (each game its own streams) or "legacy" (every
    game the same streams; datasets built before issue 54's fix, which record no base_seeding)."""
    from environments.alfworld import games as game_store
    from environments.alfworld.agents import (
        FLAWS,
        make_base_agent,
        make_expert,
        make_planner,
        make_reflect,
    )
    from environments.alfworld.env import AlfworldEnv

    if not 0 < games <= game_store.DEFAULT_GAME_COUNT:
        raise UsageError(f"--games: alfworld has {game_store.DEFAULT_GAME_COUNT} games per generator seed "
                         f"(asked for {games}, offset included)")
    if not 0.0 <= expert_noise <= 1.0:
        raise UsageError(f"--expert-noise: a rate in [0, 1], got {expert_noise}")
    if expert_budget is not None and expert_budget < 1:
        raise UsageError(f"--expert-budget: a positive number of steps, got {expert_budget}")
    if reflect not in REFLECT_MODES:
        raise UsageError(f"reflect: one of {', '.join(REFLECT_MODES)}, got {reflect!r}")
    checked_seeding(base_seeding)
    menu = [a for a in (interventions.split(",") if isinstance(interventions, str) else interventions) if a]
    unknown = [a for a in menu if a not in INTERVENTIONS]
    if unknown or not menu:
        raise UsageError(f"--interventions: alfworld has {', '.join(INTERVENTIONS)} (got {unknown[0] if unknown else 'none'!r})")
    specs = {spec.id: spec for spec in AlfworldEnv.tasks(games_seed, games)}
    game_store.ensure_games(games, seed=games_seed, workers=options.get("workers", 1))
    flaws = [f for f in BASE_FLAWS if f in FLAWS]
    factories: dict[str, Intervention] = {
        # the slips and the planner's exploration order come from Python's random, seeded per rollout
        "expert": lambda env, agent: make_expert(env, expert_noise, random.getrandbits(32)),
        "planner": lambda env, agent: make_planner(env, random.getrandbits(32)),
        "reflect": lambda env, agent: make_reflect(agent, cut_flaw_rates=reflect == "mechanism+cut"),
        "reflect-cut": lambda env, agent: make_reflect(agent, cut_flaw_rates=True),
    }
    expert = "ALFWorld's handcoded expert" + (" as shipped (move bookkeeping not fixed)" if expert_as_shipped
                                             else ", move bookkeeping fixed")
    expert += (f", slipping at {expert_noise:g} a step" if expert_noise else "")
    expert += (f", giving up after {expert_budget} steps" if expert_budget else "")
    return BranchTarget(
        name="alfworld",
        games=list(specs),
        make_env=lambda game: AlfworldEnv(specs[game], fix_expert_bookkeeping=not expert_as_shipped),
        base_agents={f: _flawed(make_base_agent, f, base_seeding) for f in flaws},
        interventions={a: factories[a] for a in INTERVENTIONS if a in menu},
        max_steps=game_store.MAX_EPISODE_STEPS,
        uses_global_random=True,
        budgets={"expert": expert_budget} if expert_budget else {},
        notes={"games": f"first {games} generated ALFWorld games of generator seed {games_seed}",
               "games_seed": games_seed, "expert": expert, "base_seeding": base_seeding,
               "reflect": ("reflect: goal re-read, loop cleared, re-exploration" +
                           (", flaw rates cut to a quarter (assumed)" if reflect == "mechanism+cut" else "")), **({"regime": regime} if regime else {}),
               **({"action_step_costs": {"expert": expert_step_cost}} if expert_step_cost else {})},
        progress_features=progress_features,
        progress_feature_names=PROGRESS_FEATURE_NAMES,
    )
