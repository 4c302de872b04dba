"""What ``agentbed run cocoder`` prints and records: the pass-rate metrics named exactly, and
the makespan and cost marked as the cost model's."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from agentbed.stats import bootstrap_ci
from agentbed.summary import fmt, headline, table

COST_MODEL_SENTENCE = ("Makespan and cost come from the cost model (environments/cocoder/costmodel.py: turn time "
                       "t0 + output/write_rate + context/context_rate, messages latency + tokens/read_rate, "
                       "dollars at the set prices) applied to what the coder wrote and read, not from a clock "
                       "or a bill; docs/cocoder.md's sensitivity table shows how they move with its constants.")
METRICS_SENTENCE = ("Mean pass rate: the repository's tests passed on the team's final code over the reference's "
                    "passed count, averaged over runs; share of runs passing every test: the runs whose code "
                    "passed all of them.")

SPEEDUP_SENTENCE = ("Speedup: the makespan of one sequential agent over the strategy's, per run, both from the cost "
                    "model: the sequential run of the same repository and seed when the run has one, else its plan.")


def _speedup(record: dict[str, Any], sequential: dict[tuple[str, str, int], float]) -> float:
    m = record["metrics"]
    base = sequential.get((record["agent"], record["task"], record["seed"]), m.get("sequential_planned_makespan"))
    return float(base) / float(m["makespan"]) if base and m["makespan"] else float("nan")


def _speedup_basis(records: list[dict[str, Any]], sequential: dict[tuple[str, str, int], float]) -> str:
    paired = all((r["agent"], r["task"], r["seed"]) in sequential for r in records)
    return "sequential runs" if paired else "sequential plan"


def summarize_runs(records: list[dict[str, Any]], options: dict[str, Any], command: str = "agentbed run cocoder"
                   ) -> dict[str, Any]:
    """Per coder and strategy: mean pass rate and the share of fully passing runs (95% bootstrap
    intervals over runs, grouped by task), and a per-task table with the cost model's figures."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        strategy = (r.get("labels") or [r.get("options", {}).get("strategy", "?")])[0]
        by[(r["agent"], strategy)].append(r)
    heads, rows = [], []
    sequential = {(r["agent"], r["task"], r["seed"]): float(r["metrics"]["makespan"])
                  for (_, strategy), recs in by.items() if strategy == "sequential" for r in recs if r.get("metrics")}
    for (agent, strategy), recs in sorted(by.items()):
        ok = [r for r in recs if r.get("metrics")]
        if not ok:
            continue
        groups = [r["task"] for r in ok]
        mean = bootstrap_ci([float(r["metrics"]["pass_rate"]) for r in ok], groups=groups)
        full = bootstrap_ci([1.0 if r["metrics"]["pass_rate"] >= 1.0 else 0.0 for r in ok], groups=groups)
        heads.append(headline("mean_pass_rate", mean, agent=agent, strategy=strategy))
        heads.append(headline("share_of_runs_passing_every_test", full, agent=agent, strategy=strategy))
        speedup = bootstrap_ci([_speedup(r, sequential) for r in ok], groups=groups)
        heads.append(headline("speedup_vs_sequential (cost model)", speedup, agent=agent, strategy=strategy,
                              over=_speedup_basis(ok, sequential)))
        heads.append(headline("cost_usd (cost model)", bootstrap_ci([float(r["metrics"]["cost_usd"]) for r in ok],
                                                                    groups=groups),
                              higher_is_better=False, agent=agent, strategy=strategy))
        for task in sorted(set(groups)):
            mine = [r["metrics"] for r in ok if r["task"] == task]
            rows.append([task, agent, strategy, f"{np.mean([m['pass_rate'] for m in mine]):.3f}",
                         f"{sum(m['pass_rate'] >= 1.0 for m in mine)}/{len(mine)}",
                         f"{np.mean([m['makespan'] for m in mine]):.1f}", f"{np.mean([m['cost_usd'] for m in mine]):.4f}",
                         f"{np.mean([m['tokens'] for m in mine]):.0f}", f"{np.mean([m['wall_seconds'] for m in mine]):.1f}",
                         len(mine)])
        rows[-1][3] = rows[-1][3] if len(set(groups)) > 1 else fmt(mean)
    untested = sorted({(r["task"], r["metrics"].get("untested_functions", 0)) for r in records if r.get("metrics")
                       and r["metrics"].get("untested_functions")})
    flagged = ("Untested code: " + "; ".join(
        f"{task}: {n} functions no reference test reaches, "
        + ("left as written (not blanked)" if task.startswith("repo:") else "still blanked, so the pass rate counts them "
           "as correct whatever was written") for task, n in untested) + ".") if untested else ""
    timeouts = sum(1 for r in records if r.get("metrics", {}).get("test_status") == "timeout")
    if timeouts:  # a final test run cut off by the time limit passed nothing: the limit, not the code
        flagged += (f" {timeouts} of {len(records)} runs' final test runs hit the sandbox's time limit: their pass "
                    "rate counts no test as passed.")
    return {"suite": "cocoder", "title": "cocoder: team runs", "episodes": len(records),
            "seeds": len({r["seed"] for r in records}), "headline": heads, "command": command, "figures": [],
            "tables": [table("Per repository, coder and strategy", ["repository", "coder", "strategy", "mean pass rate",
                                                                   "runs passing every test", "makespan s (cost model)",
                                                                   "cost $ (cost model)", "tokens", "wall-clock s",
                                                                   "runs"], rows,
                             note=f"{METRICS_SENTENCE} {SPEEDUP_SENTENCE} {COST_MODEL_SENTENCE} {flagged}".strip())],
            "cost_model": COST_MODEL_SENTENCE}
