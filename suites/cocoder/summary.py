"""What ``agentbed run cocoder`` prints and records: the pass-rate metrics named exactly, and
the makespan and cost marked as the cost model's."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from agentbed.stats import Interval, bootstrap_ci
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


UPPER_BOUND = {"file-parallel-uncapped": "upper bound: one agent per file, not capped at the team size"}
BASELINES = ("sequential", "file-parallel", "per-file", "file-parallel-uncapped")
SPLIT_SENTENCE = ("Makespan, cost and speedup are given separately for the runs that passed every test and for "
                  "the runs that did not (a failed run stops early: mixed into one mean, failure would look fast).")


def _speedup(record: dict[str, Any], sequential: dict[tuple[str, str, int], float]) -> float:
    m = record["metrics"]
    base = sequential.get((record["agent"], record["task"], record["seed"]), m.get("sequential_planned_makespan"))
    return float(base) / float(m["makespan"]) if base and m["makespan"] else float("nan")


def _speedup_basis(records: list[dict[str, Any]], sequential: dict[tuple[str, str, int], float]) -> str:
    paired = all((r["agent"], r["task"], r["seed"]) in sequential for r in records)
    return "sequential runs" if paired else "sequential plan"


def _passing(record: dict[str, Any]) -> bool:
    return float(record["metrics"]["pass_rate"]) >= 1.0


def _interval(values: list[float], tasks: list[str]) -> tuple[Interval, str]:
    """A 95% bootstrap interval over repositories (runs resampled by repository) when there are
    several, else over the runs (seeds) of the one repository, and which it is."""
    if len(set(tasks)) > 1:
        return bootstrap_ci(values, groups=tasks), f"repositories ({len(set(tasks))})"
    return bootstrap_ci(values), f"seeds of one repository ({len(values)})"


def _mean(values: list[float]) -> str:
    return f"{np.mean(values):.1f}" if values else "-"


def split_by_outcome(mine: list[dict[str, Any]], key: str, digits: int) -> str:
    """``mean over passing runs / mean over failing runs`` of ``key`` (``-`` where there are none)."""
    good = [float(m[key]) for m in mine if m["pass_rate"] >= 1.0]
    bad = [float(m[key]) for m in mine if m["pass_rate"] < 1.0]
    return " / ".join(f"{np.mean(v):.{digits}f}" if v else "-" for v in (good, bad))


def dominance(records: list[dict[str, Any]]) -> list[str]:
    """Per repository and baseline, whether CoCoder's runs dominate the baseline's: a mean pass
    rate at least as high, and a makespan and cost no larger (means over the runs that passed
    every test, or over all runs where a side has none, said so); where not, on which."""
    by: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("metrics"):
            by[(r["task"], r["agent"], (r.get("labels") or ["?"])[0])].append(r["metrics"])
    lines = []
    for (task, agent, strategy), mine in sorted(by.items()):
        if strategy != "cocoder":
            continue
        for base in BASELINES:
            theirs = by.get((task, agent, base))
            if not theirs:
                continue
            good = [m for m in mine if m["pass_rate"] >= 1.0], [m for m in theirs if m["pass_rate"] >= 1.0]
            over = "runs passing every test" if all(good) else "all runs (a side has no run passing every test)"
            a, b = (good if all(good) else (mine, theirs))
            worse = []
            if np.mean([m["pass_rate"] for m in mine]) < np.mean([m["pass_rate"] for m in theirs]):
                worse.append("lower mean pass rate")
            if np.mean([m["makespan"] for m in a]) > np.mean([m["makespan"] for m in b]):
                worse.append(f"slower ({_mean([m['makespan'] for m in a])} s against {_mean([m['makespan'] for m in b])} s)")
            if np.mean([m["cost_usd"] for m in a]) > np.mean([m["cost_usd"] for m in b]):
                worse.append(f"dearer (${np.mean([m['cost_usd'] for m in a]):.4f} against "
                             f"${np.mean([m['cost_usd'] for m in b]):.4f})")
            label = base + (f" ({UPPER_BOUND[base]})" if base in UPPER_BOUND else "")
            lines.append(f"{task}: CoCoder " + (f"does NOT dominate {label}: " + ", ".join(worse) if worse
                                                 else f"dominates {label} (means; not tested for significance)")
                         + f"; makespan and cost over {over}.")
    return lines


def run_notes(records: list[dict[str, Any]]) -> list[str]:
    """What the console must say besides the rates: timeouts, failing runs no repair reached, untested code."""
    ok = [r for r in records if r.get("metrics")]
    notes = []
    untested = sorted({(r["task"], r["metrics"].get("untested_functions", 0)) for r in ok
                       if r["metrics"].get("untested_functions")})
    if untested:
        notes.append("Untested code: " + "; ".join(
            f"{task}: {n} functions no reference test reaches, "
            + ("left as written (not blanked)" if task.startswith("repo:") else "still blanked, so the pass rate counts "
               "them as correct whatever was written") for task, n in untested) + ".")
    timed_out = [r for r in ok if r["metrics"].get("test_status") == "timeout"]
    if timed_out:  # the tests that finished count; the ones cut off count as not passed
        finished = sorted({int(r["metrics"].get("tests_finished", 0)) for r in timed_out})
        cut = sorted({t for r in timed_out for t in r["metrics"].get("tests_cut_off", [])})
        notes.append(f"{len(timed_out)} of {len(ok)} runs' final test runs hit the sandbox's time limit after "
                     f"{finished[0]}-{finished[-1]} tests" + (f", cut off while running {', '.join(cut[:3])}"
                                                              + (f" and {len(cut) - 3} more" if len(cut) > 3 else "")
                                                              if cut else "")
                     + ": their pass rate counts the tests that finished and passed.")
    for r in ok:
        if r["metrics"].get("unrepaired"):
            notes.append(f"{r['task']} {(r.get('labels') or ['?'])[0]} seed {r['seed']}: failing tests got no repair "
                         f"request: {r['metrics']['unrepaired']}.")
    return notes


def summarize_runs(records: list[dict[str, Any]], options: dict[str, Any], command: str = "agentbed run cocoder"
                   ) -> dict[str, Any]:
    """Per coder and strategy: mean pass rate and the share of fully passing runs (95% bootstrap
    intervals over repositories, or over seeds with one repository), speedup and cost over the
    runs that passed every test, a per-task table with the cost model's figures split by outcome,
    and where CoCoder does not dominate a baseline."""
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
        labels: dict[str, Any] = {"agent": agent, "strategy": strategy, **({"bound": UPPER_BOUND[strategy]} if strategy in UPPER_BOUND
                                                            else {})}
        tasks = [r["task"] for r in ok]
        mean, over = _interval([float(r["metrics"]["pass_rate"]) for r in ok], tasks)
        full, _ = _interval([1.0 if _passing(r) else 0.0 for r in ok], tasks)
        heads.append(headline("mean_pass_rate", mean, **labels, over=over))
        heads.append(headline("share_of_runs_passing_every_test", full, **labels, over=over))
        good = [r for r in ok if _passing(r)]
        if good:
            basis = f"{_speedup_basis(good, sequential)}; runs passing every test"
            speedup, over_good = _interval([_speedup(r, sequential) for r in good], [r["task"] for r in good])
            heads.append(headline("speedup_vs_sequential (cost model)", speedup, **labels, over=f"{over_good}; {basis}"))
            cost, _ = _interval([float(r["metrics"]["cost_usd"]) for r in good], [r["task"] for r in good])
            heads.append(headline("cost_usd (cost model)", cost, higher_is_better=False, **labels,
                                  over=f"{over_good}; runs passing every test"))
        for task in sorted(set(tasks)):
            mine = [r["metrics"] for r in ok if r["task"] == task]
            rows.append([task, agent, strategy + (" (upper bound)" if strategy in UPPER_BOUND else ""),
                         fmt(_interval([m["pass_rate"] for m in mine], [task] * len(mine))[0]),
                         f"{sum(m['pass_rate'] >= 1.0 for m in mine)}/{len(mine)}",
                         split_by_outcome(mine, "makespan", 1), split_by_outcome(mine, "cost_usd", 4),
                         f"{np.mean([m['tokens'] for m in mine]):.0f}", f"{np.mean([m['wall_seconds'] for m in mine]):.1f}",
                         len(mine)])
    notes = run_notes(records)
    dominated = dominance(records)
    tables = [table("Per repository, coder and strategy", ["repository", "coder", "strategy",
                                                           "mean pass rate [95% CI over seeds]",
                                                           "runs passing every test",
                                                           "makespan s (cost model): passing / failing runs",
                                                           "cost $ (cost model): passing / failing runs", "tokens",
                                                           "wall-clock s", "runs"], rows,
                    note=f"{METRICS_SENTENCE} {SPLIT_SENTENCE} {SPEEDUP_SENTENCE} {COST_MODEL_SENTENCE} "
                         + " ".join(notes))]
    if dominated:
        tables.append(table("Where CoCoder does and does not dominate", ["finding"], [[d] for d in dominated],
                            note="Dominates: mean pass rate at least the baseline's, makespan and cost no larger."))
    return {"suite": "cocoder", "title": "cocoder: team runs", "episodes": len(records),
            "seeds": len({r["seed"] for r in records}), "headline": heads, "command": command, "figures": [],
            "tables": tables, "console_notes": notes + [d for d in dominated if "does NOT" in d],
            "cost_model": COST_MODEL_SENTENCE}
