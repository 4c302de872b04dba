"""The oversight workload's entry into the engine.

``agentbed run oversight`` runs the ALFWorld base agents (the trajectories the protocol
branches); ``agentbed demo`` builds a small ALFWorld branching dataset and evaluates every
controller on it. ALFWorld is imported lazily so the suite loads without the extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentbed.agents.base import Agent
from agentbed.env import ToolEnv
from agentbed.results import write_results
from agentbed.runner import Budget, EpisodeSpec
from agentbed.suite import Option, Suite
from agentbed.summary import write_summary
from suites.oversight.benchmarks.alfworld import BASE_FLAWS

DEMO = {"games": 10, "seeds": 1, "checkpoints": 2, "first": 4, "every": 8, "rollouts": 2}
GATED = ("scalar", "scalar+platt", "scalar+isotonic", "action-conditioned", "always-continue", "always-intervene")
DEMO_BUILD = ("agentbed oversight build alfworld --games {games} --seeds {seeds} --checkpoints {checkpoints} "
              "--first {first} --every {every} --rollouts {rollouts} --workers 2 --out {out}")


def _tasks(options: dict[str, Any]) -> list[str]:
    from suites.alfworld.suite import select_tasks

    return select_tasks({"games": options["games"], "split": "all", "task_type": "all"})


def _make_env(task: str, options: dict[str, Any]) -> ToolEnv:
    from environments.alfworld.env import AlfworldEnv

    return AlfworldEnv(task)


def _base_agent(flaw: str) -> Any:
    def factory(spec: EpisodeSpec) -> Agent:
        from environments.alfworld.agents import make_base_agent

        return make_base_agent(flaw, spec.seed)

    return factory


def demo(out_dir: Path, settings: dict[str, Any] | None = None, benchmark: str = "alfworld") -> dict[str, Any]:
    """Build a small branching dataset, evaluate the controllers, write summary.json."""
    from controllers.oversight.dataset import BuildConfig
    from controllers.oversight.evaluate import EvalConfig, evaluate
    from controllers.oversight.report import figures, headlines, tables
    from suites.oversight.build import build_dataset

    s = {**DEMO, **(settings or {})}
    target_options = {"games": s["games"]} if benchmark == "alfworld" else {}
    config = BuildConfig(benchmark=benchmark, games=s["games"], seeds=s["seeds"], checkpoints=s["checkpoints"],
                         first=s["first"], every=s["every"], rollouts=s["rollouts"], workers=2,
                         target_options=target_options)
    dataset = build_dataset(config)
    where = Path(out_dir) / "oversight"
    data_path = dataset.save(where / f"{benchmark}.jsonl")
    result = evaluate(dataset, EvalConfig(resamples=500))
    build = DEMO_BUILD.format(out=data_path, **s).replace("build alfworld", f"build {benchmark}")
    command = f"{build} && agentbed oversight evaluate {data_path} --resamples 500"
    summary = {"suite": "oversight", "title": f"Prefix-branching oversight ({benchmark})", "episodes": result["rows"],
               "seeds": s["seeds"], "headline": headlines(result), "tables": tables(result, command),
               "figures": figures(result), "command": command}
    write_summary(summary, where / "summary.json")
    write_results(where / "results.json", gate_metrics(result), command=command, suite="oversight",
                  config={"build": s, "benchmark": benchmark, "costs": result["costs"]},
                  intervals={name: result["controllers"][name]["regret"] for name in GATED},
                  ratio_action_conditioned_to_scalar=result["ratio_action_conditioned_to_scalar"],
                  differences=result["differences"], replay=result["replay"])
    return summary


def gate_metrics(result: dict[str, Any], tolerance: float = 0.05) -> list[dict[str, Any]]:
    """Per-checkpoint regret of each controller, in the gate's results format (lower is better)."""
    return [{"suite": "oversight", "agent": name, "metric": "regret", "higher_is_better": False,
             "tolerance": tolerance, "values": dict(sorted(result["regret_per_checkpoint"][name].items()))}
            for name in GATED]


SUITE = Suite(
    name="oversight",
    description="Prefix-branching oversight: base agents on ALFWorld, branched and scored by controllers.",
    tasks=_tasks,
    make_env=_make_env,
    agents={f"base-{flaw}": _base_agent(flaw) for flaw in BASE_FLAWS},
    default_agent="base-noisy",
    options={"games": Option(DEMO["games"], "use the first N generated ALFWorld games", type=int)},
    budget=Budget(max_steps=50),
    demo=demo,
)
