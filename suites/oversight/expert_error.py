"""The noisy expert's slip rate, measured on development games (issue 34).

A realistic expert does not see the game's hidden state. The measurement plays ALFWorld's
flawless plan-following agent (the planner handover's policy, which sees only what an agent
sees) from the first step of each development game and, before each of its steps, asks
ALFWorld's handcoded expert (which reads the game's state: the optimal next command) what it
would send. Two figures, pooled over games, each with an interval that resamples whole games:

* the deviation rate: the share of the planner's steps where the two commands differ (most are
  exploration: the planner must search where the expert knows);
* the wasted-step share, ``1 - L_expert / L_planner`` (episode lengths from the first step, the
  expert's own episode played alone): the slip rate at which an expert that sends a random
  command and re-plans (about one step lost per slip) takes as long as the planner. This is the
  noisy expert's rate in the ``costly-noisy`` configuration (docs/oversight.md).

Only development generator seeds (suites/oversight/seeds.py) are measured; others are refused.
The planner's exploration order draws from its random stream, seeded per game by default
(``--base-seeding game``); ``legacy`` leaves the game out, as the record measured before issue 54's
fix did (every game then drew the same order); the command recorded names the setting.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentbed.control import CONTINUE, Controller, Verdict
from agentbed.provenance import code_commit
from agentbed.runner import Budget, EpisodeSpec, run_episode
from agentbed.stats import Interval
from agentbed.streams import SEEDINGS
from controllers.oversight.calibration import cluster_bootstrap
from suites.oversight.seeds import SEEDS


@dataclass(frozen=True)
class GameDeviations:
    game: str
    seed: int
    steps: int  # steps where the expert had a next command
    deviations: int  # of those, steps where the agent sent something else
    success: bool
    length: int  # the planner's episode length
    expert_length: int  # the expert's own episode length on the same game


class _CompareWithExpert(Controller):
    """Before each action, compare the agent's command with the expert's in the same state."""

    def __init__(self, env: Any) -> None:
        self.env, self.steps, self.deviations = env, 0, 0

    def before_action(self, ctx: Any, proposed: Any) -> Verdict:
        best = self.env.expert_command()
        if best:
            sent = json.loads(proposed.text)
            command = sent.get("arguments", {}).get("command", sent.get("tool", ""))
            self.steps += 1
            self.deviations += int(command.strip() != best)
        return CONTINUE


def measure_game(game: Any, seed: int, seeding: str = "game") -> GameDeviations:
    """One episode of the flawless planner on ``game`` (a TaskSpec), compared with the expert;
    ``seeding`` is the planner's (agentbed.streams.SEEDINGS)."""
    from environments.alfworld.agents import make_base_agent, make_expert
    from environments.alfworld.env import AlfworldEnv
    from environments.alfworld.games import MAX_EPISODE_STEPS

    env = AlfworldEnv(game)
    compare = _CompareWithExpert(env)
    record = run_episode(env, make_base_agent("none", seed, seeding=seeding), EpisodeSpec("alfworld", game.id, "planner", seed),
                         budget=Budget(MAX_EPISODE_STEPS), controller=compare)
    env = AlfworldEnv(game)
    alone = run_episode(env, make_expert(env), EpisodeSpec("alfworld", game.id, "expert", seed),
                        budget=Budget(MAX_EPISODE_STEPS))
    return GameDeviations(game.id, seed, compare.steps, compare.deviations, bool(record.success),
                          record.steps, alone.steps)


def measure(games_seed: int = 0, games: int = 8, offset: int = 0, seeds: int = 2,
            resamples: int = 1000, seeding: str = "game") -> dict[str, Any]:
    """The pooled deviation rate over ``games`` development games of generator ``games_seed``
    (from ``offset``), ``seeds`` episodes each (the planner's exploration order differs)."""
    split = SEEDS["alfworld"]
    if games_seed not in split.development:
        raise ValueError(f"generator seed {games_seed} is {split.role(games_seed)} ({split.describe()}): "
                         "the slip rate is set on development games only")
    from environments.alfworld import games as game_store
    from environments.alfworld.env import AlfworldEnv

    game_store.ensure_games(offset + games, seed=games_seed)
    specs = AlfworldEnv.tasks(games_seed, offset + games)[offset:]
    per = [measure_game(spec, seed, seeding) for spec in specs for seed in range(seeds)]
    groups = np.array([p.game for p in per])
    steps = np.array([p.steps for p in per], dtype=float)
    deviations = np.array([p.deviations for p in per], dtype=float)
    length = np.array([p.length for p in per], dtype=float)
    expert = np.array([p.expert_length for p in per], dtype=float)
    rate: Interval = cluster_bootstrap(lambda i: deviations[i].sum() / max(steps[i].sum(), 1.0), groups,
                                       resamples=resamples)
    wasted: Interval = cluster_bootstrap(lambda i: 1.0 - expert[i].sum() / max(length[i].sum(), 1.0), groups,
                                         resamples=resamples)
    return {"games_seed": games_seed, "base_seeding": seeding, "games": [s.id for s in specs], "episodes": len(per),
            "steps": int(steps.sum()), "deviations": int(deviations.sum()),
            "deviation_rate": _rounded(rate), "planner_steps": int(length.sum()), "expert_steps": int(expert.sum()),
            "wasted_step_share": _rounded(wasted), "planner_success": sum(p.success for p in per),
            "per_episode": [p.__dict__ for p in per]}


def _rounded(interval: Interval) -> list[float]:
    """[estimate, low, high], to 4 places."""
    return [round(interval.estimate, 4), round(interval.low, 4), round(interval.high, 4)]


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m suites.oversight.expert_error", description=__doc__.split("\n")[0])
    parser.add_argument("--games-seed", type=int, default=0)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=3, help="planner episodes per game")
    parser.add_argument("--base-seeding", choices=SEEDINGS, default="game",
                        help="the planner's random stream: per game (default) or legacy (one for every game)")
    parser.add_argument("--out", default=None, help="also write the result (JSON) here")
    args = parser.parse_args(argv)
    try:
        measured = measure(args.games_seed, args.games, args.offset, args.seeds, seeding=args.base_seeding)
    except ValueError as error:
        parser.error(str(error))
    # the record says how to rebuild it: the command (every setting spelled out) and the code's commit
    command = (f"python -m suites.oversight.expert_error --games-seed {args.games_seed} --games {args.games} "
               f"--offset {args.offset} --seeds {args.seeds} --base-seeding {args.base_seeding}" + (f" --out {shlex.quote(args.out)}" if args.out else ""))
    result = {"command": command, "git_commit": code_commit(), **measured}
    summary = {k: v for k, v in result.items() if k != "per_episode"}
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
