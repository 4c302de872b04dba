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

DEMO = {"games": 4, "seeds": 1, "checkpoints": 2, "first": 4, "every": 8, "rollouts": 2, "trees": 60}
FULL = {"games": 30, "seeds": 1, "checkpoints": 3, "first": 3, "every": 6, "rollouts": 2, "trees": 200}
GATED = ("scalar", "scalar+platt", "scalar+isotonic", "best-fixed", "scalar-bands", "cost-rule", "action-conditioned",
         "always-continue", "always-intervene")
DEMO_BUILD = ("agentbed oversight build alfworld --games {games} --seeds {seeds} --checkpoints {checkpoints} "
              "--first {first} --every {every} --rollouts {rollouts} --workers 2 --out {out}")
PAPER_RATIO = "0.22 (0.110 / 0.506)"
HELD_OUT = "docs/oversight.md, 'ALFWorld, held out': agentbed oversight evaluate HELD --train DEV"


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


def demo(out_dir: Path, settings: dict[str, Any] | None = None, benchmark: str = "alfworld",
         full: bool = False) -> dict[str, Any]:
    """Build a small branching dataset, evaluate the controllers, write summary.json (with the
    findings of the one-screen summary) and results.json for the gate."""
    from agentbed import progress
    from controllers.oversight.dataset import BuildConfig
    from controllers.oversight.evaluate import EvalConfig, evaluate
    from controllers.oversight.policies import ForestSettings
    from controllers.oversight.report import figures, headlines, tables
    from suites.oversight.build import build_dataset

    s = {**(FULL if full else DEMO), **(settings or {})}
    target_options = {"games": s["games"]} if benchmark == "alfworld" else {}
    config = BuildConfig(benchmark=benchmark, games=s["games"], seeds=s["seeds"], checkpoints=s["checkpoints"],
                         first=s["first"], every=s["every"], rollouts=s["rollouts"], workers=2,
                         target_options=target_options)
    with progress.steps(f"oversight: branching {benchmark}", 1) as done:
        dataset = build_dataset(config)
        done(f"{len(dataset.rows)} branches")
    where = Path(out_dir) / "oversight"
    data_path = dataset.save(where / f"{benchmark}.jsonl")
    forest = ForestSettings(n_estimators=s["trees"])
    with progress.steps("oversight: evaluating controllers", 1) as done:
        result = evaluate(dataset, EvalConfig(resamples=500, forest=forest))
        done()
    build = DEMO_BUILD.format(out=data_path, **s).replace("build alfworld", f"build {benchmark}")
    command = f"{build} && agentbed oversight evaluate {data_path} --resamples 500 --trees {s['trees']}"
    summary = {"suite": "oversight", "title": f"Prefix-branching oversight ({benchmark})", "episodes": result["rows"],
               "seeds": s["seeds"], "headline": headlines(result), "tables": tables(result, command),
               "figures": figures(result), "command": command, "findings": findings(result)}
    write_summary(summary, where / "summary.json")
    write_results(where / "results.json", gate_metrics(result), command=command, suite="oversight",
                  config={"build": s, "benchmark": benchmark, "costs": result["costs"]},
                  intervals={name: result["controllers"][name]["regret"] for name in GATED},
                  ratio_action_conditioned_to_scalar=result["ratio_action_conditioned_to_scalar"],
                  ratios=result["ratios"], differences=result["differences"], accounting=result["accounting"])
    return summary


def findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The demo's headline lines: the ratio against the best scalar-only policy beside the paper's,
    what the best scalar-only policy was, and the calibration test that could fail."""
    from agentbed.stats import Interval
    from agentbed.summary import finding

    def iv(d: dict[str, float]) -> Interval:
        return Interval(d["estimate"], d["low"], d["high"], int(d.get("n", 0)))

    n = f"{result['checkpoints']} checkpoints, {result['games']} games, scripted base agents, cross-validated"
    selected = result["ratios"]["selected_scalar_only"]
    cal = result["calibration"]["differences"]
    return [
        finding("ratio AC / two-action routing", iv(result["ratio_action_conditioned_to_scalar"]), paper=PAPER_RATIO,
                note=f"the paper's comparison; {n}"),
        finding("what this size can show", size_verdict(selected, result["games"]), note=f"the measurement: {HELD_OUT}"),
        finding("ratio AC / scalar-only chosen on training folds", iv(selected),
                paper="none (the paper compares with threshold routing)"),
        finding("cost-derived rule: regret Platt - raw", iv(cal["cost-rule+platt - cost-rule"]),
                paper="unchanged (0.318)", note="a test that could fail: nothing re-tuned"),
    ]


def size_verdict(ratio: dict[str, Any], games: int) -> str:
    """Plainly, whether the demo's ratio interval can tell a gain from none: at a few games it
    usually cannot (it reaches 1, or spans more than a factor of 4)."""
    low, high = float(ratio["low"]), float(ratio["high"])
    if high >= 1.0 or (low > 0 and high / low > 4):
        return f"nothing: at {games} games the ratio's interval [{low:.2f}, {high:.2f}] is uninformative"
    return f"a gain: the ratio's interval [{low:.2f}, {high:.2f}] lies below 1 at {games} games"


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
