"""``agentbed oversight all``: build and evaluate every benchmark, one table of regret per
controller per benchmark (with intervals), written as the workload's summary for the report.

Sizes are the documented small ones (docs/oversight.md, "Results"); ALFWorld's game count is
an option because it dominates the time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbed import progress
from agentbed.summary import table, write_summary
from controllers.oversight.dataset import BuildConfig, Dataset
from controllers.oversight.evaluate import EvalConfig, evaluate
from controllers.oversight.report import accounting_table, fmt_interval, tables
from suites.oversight.benchmarks.alfworld import DEFAULT_REGIME, REGIMES, describe_regime
from suites.oversight.build import build_dataset
from suites.oversight.seeds import check_split, only_development


@dataclass(frozen=True)
class Plan:
    """One benchmark's build: BuildConfig's fields beyond the benchmark name."""

    benchmark: str
    build: dict[str, Any] = field(default_factory=dict)
    target_options: dict[str, Any] = field(default_factory=dict)


def plans(alfworld_games: int = 20) -> list[Plan]:
    return [
        Plan("alfworld", {"games": alfworld_games, "checkpoints": 3, "first": 4, "every": 8, "rollouts": 2},
             {"games": alfworld_games, "regime": DEFAULT_REGIME, **REGIMES[DEFAULT_REGIME]}),
        Plan("scienceworld", {"games": 11, "checkpoints": 2, "first": 3, "every": 5, "rollouts": 2}),
        Plan("suite:contracts", {"checkpoints": 3, "first": 1, "every": 2, "rollouts": 1},
             {"base": "naive", "interventions": "oracle"}),
        Plan("graphrag", {"checkpoints": 1, "first": 2, "rollouts": 1}),
    ]


def command_of(plan: Plan, out: Path) -> str:
    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in plan.build.items())
    if plan.benchmark == "alfworld":
        flags += f" --regime {plan.target_options['regime']}"
    extra = " --base-agents naive --interventions oracle" if plan.benchmark.startswith("suite:") else ""
    return f"agentbed oversight build {plan.benchmark} {flags}{extra} --out {out}"


def run_all(out_dir: Path, *, alfworld_games: int = 20, workers: int = 2, resamples: int = 1000,
            only: list[str] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Build and evaluate each benchmark; write ``<out>/oversight/summary.json`` and the datasets."""
    where = Path(out_dir) / "oversight"
    results: dict[str, dict[str, Any]] = {}
    commands: dict[str, str] = {}
    chosen = [p for p in plans(alfworld_games) if not only or p.benchmark in only]
    with progress.steps("oversight: benchmarks", len(chosen)) as step:
        for plan in chosen:
            path = where / f"{plan.benchmark.replace(':', '-')}.jsonl"
            config = BuildConfig(benchmark=plan.benchmark, workers=workers, target_options=plan.target_options,
                                 **plan.build)
            dataset = build_dataset(config)
            dataset.save(path)
            commands[plan.benchmark] = (f"{command_of(plan, path)} && agentbed oversight evaluate {path} "
                                        f"--resamples {resamples}")
            developed = only_development(Dataset.load(path))  # the registry's held-out games are never fitted on
            check_split(developed.provenance, f"all: {plan.benchmark}", "fit")
            results[plan.benchmark] = evaluate(developed, EvalConfig(resamples=resamples, grid=False))
            log(f"{plan.benchmark}: {results[plan.benchmark]['checkpoints']} checkpoints evaluated")
            step()
    summary: dict[str, Any] = {"suite": "oversight", "title": "Prefix-branching oversight: every benchmark",
               "tables": [regret_table(results, "agentbed oversight all --out " + str(out_dir))],
               "figures": [], "headline": [], "command": f"agentbed oversight all --out {out_dir}"}
    for name, result in results.items():
        summary["tables"] += [t for t in tables(result, commands[name])[:2]]
        summary["tables"].append(accounting_table(result, commands[name]))
    write_summary(summary, where / "summary.json")
    return {"summary": summary, "results": results}


def regret_table(results: dict[str, dict[str, Any]], command: str) -> dict[str, Any]:
    """Rows: controllers; columns: benchmarks; cells: regret with its 95% interval. The last rows
    name each benchmark's best scalar-only policy and the ratio of action-conditioned regret to it."""
    names = list(dict.fromkeys(n for r in results.values() for n in r["controllers"]))
    rows = [[name, *[fmt_interval(r["controllers"][name]["regret"]) if name in r["controllers"] else "-"
                     for r in results.values()]] for name in names]
    rows.append(["best scalar-only policy", *[r["best_scalar_only"] for r in results.values()]])
    rows.append(["ratio action-conditioned / best scalar-only",
                 *[fmt_interval(r["ratios"]["best_scalar_only"]) for r in results.values()]])
    rows.append(["checkpoints evaluated / built", *[f"{r['accounting']['checkpoints_evaluated']} / "
                                                   f"{r['accounting']['checkpoints_built']}" for r in results.values()]])
    rows.insert(len(rows) - 1, ["ratio action-conditioned / scalar-only chosen on training folds",
                                *[fmt_interval(r["ratios"]["selected_scalar_only"]) for r in results.values()]])
    alfworld = results.get("alfworld")
    which = (f"ALFWorld in its default configuration, {DEFAULT_REGIME}: {describe_regime(DEFAULT_REGIME)}; "
             "its held-out headline (the same configuration) is suites/oversight/data/headline.json, which "
             "`agentbed demo --suites oversight` shows. " if alfworld else "")
    return table("Regret per controller per benchmark", ["controller", *results], rows,
                 "Mean regret over held-out checkpoints (5-fold cross-validation holding out whole games; GraphRAG "
                 "groups a question's games) of development games only (suites/oversight/seeds.py: the "
                 "registry's held-out games are left out), 95% cluster-bootstrap intervals over games. "
                 f"{which}"
                 f"Regenerate: {command}")
