"""ALFWorld as a branching benchmark, through the public factories of environments.alfworld.

Games are the generated ALFWorld games (the first ``games`` of them); base agents are the
scripted flawed agents; "expert" defers to ALFWorld's handcoded expert, "reflect" is the
agent's self-repair variant. The environment cannot snapshot, so every branch replays the
prefix (verified), with Python's ``random`` seeded first (the expert draws from it).
"""

from __future__ import annotations

from typing import Any

from agentbed.errors import UsageError
from controllers.oversight.target import BranchTarget
from suites.oversight.benchmarks.alfworld_progress import PROGRESS_FEATURE_NAMES, progress_features

DEFAULT_GAMES = 40
BASE_FLAWS = ("noisy", "looping", "forgetful", "mixed", "detour")


def target(games: int = DEFAULT_GAMES, games_seed: int = 0, fix_expert_bookkeeping: bool = False,
           **options: Any) -> BranchTarget:
    """The first ``games`` games of generator ``games_seed`` (at most 320 per seed).

    ``fix_expert_bookkeeping``: the handed-over expert learns that a "move O to R" put O down
    (ALFWorld's own expert never does; environments/alfworld/tw.py). Only the expert's branches
    change: the base agents never consult it."""
    from environments.alfworld import games as game_store
    from environments.alfworld.agents import FLAWS, make_base_agent, make_expert, make_reflect
    from environments.alfworld.env import AlfworldEnv

    if not 0 < games <= game_store.DEFAULT_GAME_COUNT:
        raise UsageError(f"--games: alfworld has {game_store.DEFAULT_GAME_COUNT} games per generator seed "
                         f"(asked for {games}, offset included)")
    specs = {spec.id: spec for spec in AlfworldEnv.tasks(games_seed, games)}
    game_store.ensure_games(games, seed=games_seed, workers=options.get("workers", 1))
    flaws = [f for f in BASE_FLAWS if f in FLAWS]
    return BranchTarget(
        name="alfworld",
        games=list(specs),
        make_env=lambda game: AlfworldEnv(specs[game], fix_expert_bookkeeping=fix_expert_bookkeeping),
        base_agents={f: (lambda seed, f=f: make_base_agent(f, seed)) for f in flaws},
        interventions={"expert": lambda env, agent: make_expert(env), "reflect": lambda env, agent: make_reflect(agent)},
        max_steps=game_store.MAX_EPISODE_STEPS,
        uses_global_random=True,
        notes={"games": f"first {games} generated ALFWorld games of generator seed {games_seed}",
               "games_seed": games_seed,
               "expert": "ALFWorld's handcoded expert" + (", move bookkeeping fixed" if fix_expert_bookkeeping else "")},
        progress_features=progress_features,
        progress_feature_names=PROGRESS_FEATURE_NAMES,
    )
