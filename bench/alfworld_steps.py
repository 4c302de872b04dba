"""ALFWorld steps per second: agentbed's environment vs TextWorld driven directly, in one run.

Every configuration plays the same commands (each game's recorded expert walkthrough) on
the same generated games:

* ``textworld``: ``PddlEnv`` + ALFWorld's demangler and info wrappers, no expert, TextWorld's
  text generation as shipped (the floor: what any ALFWorld harness pays);
* ``textworld+expert``: the same plus ALFWorld's ``AlfredExpert`` (handcoded), as ALFWorld's own
  ``AlfredTWEnv`` runs it for DAgger training;
* ``agentbed (original textgen)``: ``AlfworldEnv`` through ``env.step`` with JSON tool calls,
  the seeded expert and TextWorld's text generation as shipped;
* ``agentbed``: the same with the text-generation shortcuts on (the default).

    .venv/bin/python bench/alfworld_steps.py --games 6 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from agentbed.tools import make_action
from environments.alfworld import games
from environments.alfworld.env import AlfworldEnv
from environments.alfworld.tw import load_game, raw_game_env, set_textgen_acceleration


def _textworld(path: Path, commands: list[str], expert: bool) -> tuple[float, float]:
    t0 = time.perf_counter()
    env = load_game(path) if expert else raw_game_env(path)
    if expert:
        env.seed_expert(games.EXPERT_SEED)
    env.reset()
    t1 = time.perf_counter()
    for command in commands:
        env.step(command)
    return t1 - t0, time.perf_counter() - t1


def _agentbed(task: str, commands: list[str]) -> tuple[float, float]:
    t0 = time.perf_counter()
    env = AlfworldEnv(task)
    env.reset(seed=0)
    t1 = time.perf_counter()
    for command in commands:
        env.step(make_action("act", command=command))
    return t1 - t0, time.perf_counter() - t1


def measure(play: Callable[[], tuple[float, float]], repeats: int) -> tuple[float, float]:
    """Median (load + reset seconds, stepping seconds) over ``repeats`` runs."""
    runs = [play() for _ in range(repeats)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6, help="first N generated games (default 6: one per type)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    paths = games.ensure_games(args.games, workers=1)
    plays = [(games.game_id(i), p, json.loads(p.read_text())["walkthrough"]) for i, p in enumerate(paths)]
    total_steps = sum(len(w) for _, _, w in plays)
    configs: list[tuple[str, bool, Callable[[str, Path, list[str]], tuple[float, float]]]] = [
        ("textworld", False, lambda t, p, w: _textworld(p, w, expert=False)),
        ("textworld+expert", False, lambda t, p, w: _textworld(p, w, expert=True)),
        ("agentbed (original textgen)", False, lambda t, p, w: _agentbed(t, w)),
        ("agentbed", True, lambda t, p, w: _agentbed(t, w)),
    ]
    print(f"{args.games} games, {total_steps} steps per pass, median of {args.repeats} passes per game\n")
    print(f"{'configuration':<30}{'steps/s':>10}{'ms/step':>10}{'load+reset ms':>15}")
    for name, accelerated, play in configs:
        set_textgen_acceleration(accelerated)
        timings = [measure(lambda t=t, p=p, w=w, f=play: f(t, p, w), args.repeats) for t, p, w in plays]
        stepping = sum(step for _, step in timings)
        loading = statistics.mean(load for load, _ in timings)
        print(f"{name:<30}{total_steps / stepping:>10.1f}{1000 * stepping / total_steps:>10.1f}{1000 * loading:>15.0f}")
    set_textgen_acceleration(True)


if __name__ == "__main__":
    main()
