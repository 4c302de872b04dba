"""How CoCoder's speedup and cost saving move with the cost model's constants.

A team run's makespan and dollar cost are the cost model's arithmetic
(``environments.cocoder.costmodel``) over what the agents wrote and read: where nothing fails, the
run's makespan is the planned one exactly. So the ratios against sequential are fixed by ``t0``,
``write_rate``, ``context_rate``, the message latency and the prices, and this sweep shows by how
much: each constant alone over a plausible range (its source beside it), the others at their
defaults, every strategy re-planned at each point (the planner sees the constants too). No test
runs: the numbers are the plans' (domination is on makespan and cost; the failure model's
planned residual risk is recorded beside them).

Run: ``python -m suites.cocoder.sensitivity OUT [--tasks tinydb,hl7]`` (all fetched repositories
by default, every value; the demo runs the ends of each range on one repository).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbed.progress import steps
from agentbed.summary import figure_from_matplotlib, table
from environments.cocoder.costmodel import CostModel
from environments.cocoder.tasks import load_task
from suites.cocoder.planning import TeamConfig, plan_team

STRATEGIES = ("sequential", "file-parallel", "cocoder")
PRICE_OUT = CostModel().price_out


@dataclass(frozen=True)
class Sweep:
    constant: str  # a CostModel field
    values: tuple[float, ...]
    unit: str
    source: str  # why this range is plausible


SWEEPS = (
    Sweep("t0", (1.0, 2.0, 5.0, 10.0, 20.0), "s",
          "fixed seconds per turn (request round trip, tool call, the agent framework): about 1 s for a hosted "
          "API, tens of seconds with a framework's planning step"),
    Sweep("write_rate", (10.0, 25.0, 50.0, 100.0, 200.0), "tok/s",
          "output tokens per second: a small model on a CPU at the low end (the local Gemma 3 270M wrote "
          "0.15-6 tok/s on this loaded 2-core machine, docs/cocoder.md), hosted small models' published "
          "output speeds of about 50-200 tok/s at the high end"),
    Sweep("context_rate", (500.0, 1000.0, 5000.0, 20000.0), "tok/s",
          "prompt (prefill) tokens per second: a CPU-served small model at hundreds, hosted APIs at thousands"),
    Sweep("latency", (0.0, 5.0, 20.0, 60.0), "s",
          "seconds per cross-agent message (lambda): from free to about one full model turn and more"),
    Sweep("price_in", (0.025e-6, 0.25e-6, 1.0e-6, 2.0e-6), "$/token",
          "input price at an output price of $2/M (gpt-5-mini's published $0.25/M input, $2/M output; "
          "$0.025/M is its cached-input price, $2/M makes input as dear as output)"),
)


def plan_point(task: str, cost: CostModel, agents: int = 3) -> dict[str, dict[str, float]]:
    """Makespan, dollar cost and residual risk of each strategy's plan under ``cost``."""
    from controllers.cocoder.schedule import residual_risk

    out = {}
    repo = load_task(task)
    for strategy in STRATEGIES:
        config = TeamConfig(strategy=strategy, agents=agents, cost=cost)
        _, _, schedule = plan_team(repo, config, 0)
        context = sum(t.context_tokens for t in schedule.turns)
        written = sum(t.out_tokens for t in schedule.turns)
        out[strategy] = {"makespan": schedule.makespan, "cost": cost.dollars(context, written, schedule.messages),
                         "risk": residual_risk(schedule, config.failure, config.repair_rounds)}
    return out


def _dominates(a: dict[str, float], b: dict[str, float]) -> bool:
    """Pareto on the cost model's two outputs (the risk is the failure model's, reported apart)."""
    keys = ("makespan", "cost")
    return all(a[k] <= b[k] + 1e-12 for k in keys) and any(a[k] < b[k] - 1e-12 for k in keys)


def sweep(tasks: list[str], *, ends_only: bool = False) -> list[dict[str, Any]]:
    """One row per repository, constant and value: speedup and cost saving of CoCoder against
    sequential, and whether its plan Pareto-dominates sequential's and file-parallel's."""
    points = [(s, v) for s in SWEEPS for v in ((s.values[0], s.values[-1]) if ends_only else s.values)]
    rows = []
    with steps("cocoder: cost-model sensitivity", len(tasks) * (len(points) + 1)) as done:
        for task in tasks:
            default = plan_point(task, CostModel())
            done(task)
            for sw, value in points:
                plans = default if value == getattr(CostModel(), sw.constant) else \
                    plan_point(task, CostModel().with_(**{sw.constant: value}))
                seq, fp, coc = plans["sequential"], plans["file-parallel"], plans["cocoder"]
                rows.append({"task": task, "constant": sw.constant, "value": value,
                             "speedup": seq["makespan"] / coc["makespan"], "saving": 1 - coc["cost"] / seq["cost"],
                             "speedup_vs_fp": fp["makespan"] / coc["makespan"],
                             "cost_vs_fp": coc["cost"] / fp["cost"] - 1,
                             "risk": coc["risk"], "risk_seq": seq["risk"],
                             "dominates_seq": _dominates(coc, seq), "dominates_fp": _dominates(coc, fp)})
                done(f"{task} {sw.constant}={value:g}")
    return rows


def _value(sw: Sweep, value: float) -> str:
    return f"${value * 1e6:g}/M" if sw.constant == "price_in" else f"{value:g} {sw.unit}"


def where_not_dominating(rows: list[dict[str, Any]]) -> str:
    """The sentence the page and the demo print: where CoCoder's plan stops dominating each baseline
    (Pareto, on planned makespan and dollar cost)."""
    by = {s.constant: s for s in SWEEPS}
    parts = []
    for key, who in (("dominates_seq", "sequential"), ("dominates_fp", "file-parallel")):
        lost = [f"{r['task']} {r['constant']} = {_value(by[r['constant']], r['value'])}" for r in rows if not r[key]]
        parts.append(f"it dominates {who} at every point" if not lost else
                     f"it does not dominate {who} at {len(lost)} of {len(rows)} points ({'; '.join(lost[:12])}"
                     + (" ..." if len(lost) > 12 else "") + ")")
    return "By the plans (makespan and cost), " + "; ".join(parts)


def sensitivity_table(rows: list[dict[str, Any]], command: str) -> dict[str, Any]:
    by = {s.constant: s for s in SWEEPS}
    body = [[r["task"], r["constant"], _value(by[r["constant"]], r["value"]), f"{r['speedup']:.2f}",
             f"{100 * r['saving']:.0f}%", f"{r['speedup_vs_fp']:.2f}", f"{100 * r['cost_vs_fp']:+.1f}%",
             "yes" if r["dominates_seq"] else "no", "yes" if r["dominates_fp"] else "no"]
            for r in rows]
    sources = " ".join(f"{s.constant}: {s.source}." for s in SWEEPS)
    return table("Cost-model sensitivity: CoCoder's speedup and cost saving against sequential as each constant "
                 "moves (cost model, planned; the others at their defaults)",
                 ["repository", "constant", "value", "speedup (seq/cocoder)", "cost saving", "speedup vs file-parallel",
                  "cost vs file-parallel", "dominates sequential", "dominates file-parallel"], body,
                 note="These ratios are the cost model's arithmetic, not measurements: a run where nothing fails has "
                      "exactly the planned makespan. " + where_not_dominating(rows) + ". Ranges: " + sources
                      + f" {command}")


def sensitivity_figure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(SWEEPS), figsize=(3.2 * len(SWEEPS), 5.6), squeeze=False)
    for col, sw in enumerate(SWEEPS):
        for task in sorted({r["task"] for r in rows}):
            mine = sorted((r for r in rows if r["task"] == task and r["constant"] == sw.constant),
                          key=lambda r: r["value"])
            xs = [r["value"] * (1e6 if sw.constant == "price_in" else 1) for r in mine]
            axes[0][col].plot(xs, [r["speedup"] for r in mine], marker="o", label=task)
            axes[1][col].plot(xs, [100 * r["saving"] for r in mine], marker="o", label=task)
        axes[1][col].set_xlabel(f"{sw.constant} ({'$/M tokens' if sw.constant == 'price_in' else sw.unit})")
        if sw.constant in ("write_rate", "context_rate", "price_in", "t0"):
            for ax in (axes[0][col], axes[1][col]):
                ax.set_xscale("log")
    axes[0][0].set_ylabel("speedup (seq/cocoder)")
    axes[1][0].set_ylabel("cost saving %")
    axes[0][0].legend(fontsize=6)
    figure = figure_from_matplotlib("Speedup and cost saving of CoCoder against sequential over the cost model's "
                                    "constants (cost model, planned)", fig)
    plt.close(fig)
    return figure


if __name__ == "__main__":
    import argparse

    from environments.cocoder.repos import fetched_repos

    parser = argparse.ArgumentParser(prog="python -m suites.cocoder.sensitivity", description=__doc__.split("\n")[0])
    parser.add_argument("out", help="folder for sensitivity.json")
    parser.add_argument("--tasks", help="comma-separated tasks (default: every fetched repository)")
    args = parser.parse_args()
    chosen = args.tasks.split(",") if args.tasks else [r.name for r in fetched_repos()]
    found = sweep(chosen)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "sensitivity.json").write_text(json.dumps(found, indent=1), encoding="utf-8")
    tab = sensitivity_table(found, "python -m suites.cocoder.sensitivity")
    print("| " + " | ".join(tab["columns"]) + " |")
    print("|" + "---|" * len(tab["columns"]))
    for row in tab["rows"]:
        print("| " + " | ".join(map(str, row)) + " |")
    print(where_not_dominating(found))
