"""The ``alfworld`` suite: generated ALFWorld games, scripted flawed agents and the handcoded expert."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import environments.alfworld  # noqa: F401 - registers agentbed/alfworld-v0
from agentbed.runner import Budget, EpisodeRecord, EpisodeSpec
from agentbed.stats import bootstrap_ci, paired_difference_ci
from agentbed.suite import Option, Suite, SuiteError
from agentbed.summary import fmt, headline, interval_bars, table, write_summary
from environments.alfworld import games
from environments.alfworld.agents import FLAWS, ExpertAgent, make_base_agent
from environments.alfworld.env import AlfworldEnv
from environments.alfworld.layouts import TASK_TYPES

SPLITS = ("all", "train", "heldout")


def select_tasks(options: dict[str, Any]) -> list[str]:
    """Task ids for ``--split``, ``--task-type`` and ``--games`` (the first N games)."""
    count = options.get("games", games.DEFAULT_GAME_COUNT)
    if not 1 <= count <= games.DEFAULT_GAME_COUNT:
        raise SuiteError(f"--games: {count} is outside 1..{games.DEFAULT_GAME_COUNT}")
    chosen = []
    for spec in AlfworldEnv.task_list()[:count]:
        if options.get("split", "all") not in ("all", spec.params["split"]):
            continue
        if options.get("task_type", "all") not in ("all", spec.params["task_type"]):
            continue
        chosen.append(spec.id)
    return chosen


def _agents() -> dict[str, Any]:
    return {**{f"scripted-{flaw}": (lambda setup, f=flaw: make_base_agent(f, setup.spec.seed)) for flaw in FLAWS},
            "expert": lambda setup: ExpertAgent(setup.env)}  # asks its game's own solver


DEMO_AGENTS = ("scripted-noisy", "scripted-looping", "scripted-forgetful", "scripted-mixed", "expert")
DEMO_GAMES = 12
DEMO_COMMAND = f"agentbed run alfworld --agent AGENT --games {DEMO_GAMES} --seeds 1"


def demo(out_dir: Path) -> dict[str, Any]:
    """Success of each flawed agent and of the expert on the first 12 games (two per task type)."""
    from agentbed.executors import execute

    games.ensure_games(DEMO_GAMES, workers=2)
    options = {"split": "all", "task_type": "all", "games": DEMO_GAMES}
    specs = [EpisodeSpec("alfworld", task, agent, 0, options) for agent in DEMO_AGENTS for task in select_tasks(options)]
    run_dir = out_dir / "alfworld" / "episodes"
    run_dir.mkdir(parents=True, exist_ok=True)
    records = list(execute(specs, run_dir, executor="process", jobs=2))
    summary = summarize(records, options)
    write_summary(summary, out_dir / "alfworld" / "summary.json")
    return summary


def summarize(given: Sequence[EpisodeRecord | dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    """The suite's summary; ``given`` may hold EpisodeRecords or index rows (dicts) of a run."""
    fields = EpisodeRecord.__dataclass_fields__
    records = [r if isinstance(r, EpisodeRecord) else EpisodeRecord(**{k: v for k, v in r.items() if k in fields})
               for r in given]
    by_agent: dict[str, dict[tuple[str, int], EpisodeRecord]] = defaultdict(dict)
    for r in records:
        by_agent[r.agent][(r.task, r.seed)] = r
    agents = sorted(by_agent)
    rows, heads, intervals = [], [], []
    for agent in agents:
        recs = list(by_agent[agent].values())
        success = bootstrap_ci([float(r.success) for r in recs], groups=[r.task for r in recs])
        steps = bootstrap_ci([float(r.steps) for r in recs], groups=[r.task for r in recs])
        errors = sum(r.status == "error" for r in recs)
        rows.append([agent, len(recs), fmt(success), fmt(steps, 1), errors])
        heads.append(headline("success_rate", success, agent=agent))
        intervals.append((agent, success))
    diff_rows = []
    if "expert" in by_agent:
        for agent in agents:
            if agent == "expert":
                continue
            keys = sorted(set(by_agent[agent]) & set(by_agent["expert"]))
            diff = paired_difference_ci([float(by_agent["expert"][k].success) for k in keys],
                                        [float(by_agent[agent][k].success) for k in keys], groups=[k[0] for k in keys])
            diff_rows.append([agent, len(keys), fmt(diff)])
    by_type = []
    for task_type in TASK_TYPES:
        row: list[Any] = [task_type]
        for agent in agents:
            vals = [float(r.success) for r in by_agent[agent].values() if r.metrics.get("task_type") == task_type]
            row.append(f"{sum(vals) / len(vals):.2f} (n={len(vals)})" if vals else "-")
        by_type.append(row)
    seeds = sorted({r.seed for r in records})
    return {
        "suite": "alfworld",
        "title": "ALFWorld (generated games): flawed scripted agents and the handcoded expert",
        "episodes": len(records), "seeds": len(seeds),
        "headline": heads,
        "tables": [
            table("Success rate and steps per agent (95% bootstrap intervals, resampling games)",
                  ["agent", "episodes", "success", "steps", "errors"], rows, note=DEMO_COMMAND),
            table("Expert minus agent: success difference on the same games and seeds",
                  ["agent", "pairs", "expert - agent"], diff_rows, note=DEMO_COMMAND),
            table("Success rate by task type", ["task type", *agents], by_type, note=DEMO_COMMAND),
        ],
        "figures": [interval_bars("Success rate per agent (95% bootstrap interval)", intervals, "success rate")] if intervals else [],
        "command": "agentbed demo alfworld",
    }


SUITE = Suite(
    name="alfworld",
    description="ALFWorld on generated games (real TextWorld/PDDL engine): flawed scripted agents and the expert.",
    tasks=select_tasks,
    make_env=lambda task, options: AlfworldEnv(task),
    agents=_agents(),
    default_agent="scripted-mixed",
    options={
        "split": Option("all", "which games: all, train or heldout (every fifth game)", SPLITS),
        "task_type": Option("all", "only games of this task type", ("all", *TASK_TYPES)),
        "games": Option(games.DEFAULT_GAME_COUNT, "use the first N generated games", type=int),
    },
    default_seeds=1,
    budget=Budget(max_steps=games.MAX_EPISODE_STEPS),
    summarize=summarize,
    demo=demo,
    demo_overseeable=True,  # every demo episode goes through agentbed.executors.execute
)
