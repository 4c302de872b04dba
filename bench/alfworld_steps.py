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

Stepping is timed apart from loading and the first reset (translating the PDDL problem), which
is shown in its own column. CPU time is shown beside wall time because a shared machine
inflates wall time unevenly.
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

Timing = tuple[float, float, float]  # load + reset wall seconds, stepping wall seconds, stepping CPU seconds


def _textworld(path: Path, commands: list[str], expert: bool) -> Timing:
    t0 = time.perf_counter()
    env = load_game(path) if expert else raw_game_env(path)
    if expert:
        env.seed_expert(games.EXPERT_SEED)
    env.reset()
    t1, c1 = time.perf_counter(), time.process_time()
    for command in commands:
        env.step(command)
    return t1 - t0, time.perf_counter() - t1, time.process_time() - c1


def _agentbed(task: str, commands: list[str]) -> Timing:
    t0 = time.perf_counter()
    env = AlfworldEnv(task)
    env.reset(seed=0)
    t1, c1 = time.perf_counter(), time.process_time()
    for command in commands:
        env.step(make_action("act", command=command))
    return t1 - t0, time.perf_counter() - t1, time.process_time() - c1


def measure(play: Callable[[], Timing], repeats: int) -> Timing:
    """The median of each timing over ``repeats`` runs, after one untimed warm-up run."""
    play()
    runs = [play() for _ in range(repeats)]
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6, help="first N generated games (default 6: one per type)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    paths = games.ensure_games(args.games, workers=1)
    plays = [(games.game_id(i), p, json.loads(p.read_text())["walkthrough"]) for i, p in enumerate(paths)]
    total_steps = sum(len(w) for _, _, w in plays)
    configs: list[tuple[str, bool, Callable[[str, Path, list[str]], Timing]]] = [
        ("textworld", False, lambda t, p, w: _textworld(p, w, expert=False)),
        ("textworld+expert", False, lambda t, p, w: _textworld(p, w, expert=True)),
        ("agentbed (original textgen)", False, lambda t, p, w: _agentbed(t, w)),
        ("agentbed", True, lambda t, p, w: _agentbed(t, w)),
    ]
    print(f"{args.games} games, {total_steps} steps per pass, median of {args.repeats} passes per game\n")
    print(f"{'configuration':<30}{'steps/s':>9}{'ms/step':>9}{'CPU ms/step':>13}{'load+reset ms':>15}")
    for name, accelerated, play in configs:
        set_textgen_acceleration(accelerated)
        timings = [measure(lambda t=t, p=p, w=w, f=play: f(t, p, w), args.repeats) for t, p, w in plays]
        wall, cpu = sum(t[1] for t in timings), sum(t[2] for t in timings)
        loading = statistics.mean(t[0] for t in timings)
        print(f"{name:<30}{total_steps / wall:>9.1f}{1000 * wall / total_steps:>9.1f}"
              f"{1000 * cpu / total_steps:>13.1f}{1000 * loading:>15.0f}")
    set_textgen_acceleration(True)


if __name__ == "__main__":
    main()
