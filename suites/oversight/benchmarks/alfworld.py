"""ALFWorld as a branching benchmark, through the public factories of environments.alfworld.

Games are the generated ALFWorld games (the first ``games`` of them); base agents are the
scripted flawed agents; "expert" defers to ALFWorld's handcoded expert, "reflect" is the
agent's self-repair variant. The environment cannot snapshot, so every branch replays the
prefix (verified), with Python's ``random`` seeded first (the expert draws from it).
"""

from __future__ import annotations

from typing import Any

from controllers.oversight.target import BranchTarget
from suites.oversight.benchmarks.alfworld_progress import PROGRESS_FEATURE_NAMES, progress_features

DEFAULT_GAMES = 40
BASE_FLAWS = ("noisy", "looping", "forgetful", "mixed")


def target(games: int = DEFAULT_GAMES, **options: Any) -> BranchTarget:
    from environments.alfworld import games as game_store
    from environments.alfworld.agents import FLAWS, make_base_agent, make_expert, make_reflect
    from environments.alfworld.env import AlfworldEnv

    specs = {spec.id: spec for spec in AlfworldEnv.task_list()[:games]}
    game_store.ensure_games(games, workers=options.get("workers", 1))
    flaws = [f for f in BASE_FLAWS if f in FLAWS]
    return BranchTarget(
        name="alfworld",
        games=list(specs),
        make_env=lambda game: AlfworldEnv(specs[game]),
        base_agents={f: (lambda seed, f=f: make_base_agent(f, seed)) for f in flaws},
        interventions={"expert": lambda env, agent: make_expert(env), "reflect": lambda env, agent: make_reflect(agent)},
        max_steps=game_store.MAX_EPISODE_STEPS,
        uses_global_random=True,
        notes={"games": f"first {games} generated ALFWorld games", "expert": "ALFWorld's handcoded expert"},
        progress_features=progress_features,
        progress_feature_names=PROGRESS_FEATURE_NAMES,
    )
