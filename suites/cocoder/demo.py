"""The cocoder demo: repositories x strategies over seeds, the cost model's sensitivity, findings.

``agentbed demo --suites cocoder`` is the small run (about a minute: two repositories, the three
baselines and CoCoder, two seeds, the sensitivity at each constant's ends on tinydb);
``agentbed demo --suites cocoder --full`` (``run_demo(out, full=True)``; also ``python -m
suites.cocoder.demo OUT --full``) is every fetched repository and synth-60, every CoCoder variant,
three seeds, the Pareto sweeps, the risk ladder and the whole sensitivity sweep (tens of minutes).
Sandboxed test runs dominate the time: each distinct final code state is tested once.

Makespan and cost are the cost model's (environments.cocoder.costmodel), from what the simulated
coder wrote and read; pass rates are the repositories' real tests on the code it wrote.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from agentbed.progress import steps
from agentbed.results import write_results
from agentbed.stats import bootstrap_ci, paired_difference_ci
from agentbed.summary import figure_from_matplotlib, finding, fmt, headline, table, write_summary
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.sandboxed import TestCache
from environments.cocoder.tasks import load_task, task_ids
from suites.cocoder.sensitivity import sensitivity_figure, sensitivity_table, where_not_dominating
from suites.cocoder.sensitivity import sweep as sweep_fn
from suites.cocoder.summary import COST_MODEL_SENTENCE, split_by_outcome
from suites.cocoder.team import TeamConfig, run_team

SEEDS = (0, 1, 2)
SMALL_SEEDS = (0, 1)
SMALL_TASKS = ("tinydb", "zxcvbn")  # the two whose plans are quickest to make (about 3 s each)
SMALL_LABELS = ("sequential", "file-parallel", "file-parallel-uncapped", "per-file", "cocoder")
FULL_TASKS = ("tinydb", "hl7", "zxcvbn", "voluptuous", "transitions", "pydash", "bleach")
AGENTS = 3
LATENCIES = (0.0, 20.0, 60.0)
CROSS_ERRORS = (0.0, 0.03, 0.1)
AGENT_COUNTS = (2, 3, 5)
# the planner's risk levels on the sweep tasks: one sequential agent's bound, probabilities, no bound
RISK_LEVELS = ("sequential+0", "sequential", "0.01", "0.05", "0.2", "any")
COMMAND = "agentbed demo --suites cocoder"
FULL_COMMAND = "agentbed demo --suites cocoder --full"
SYNTHETIC_TASK = "synth-60"
WORKERS = 2
# label -> what it changes in the team configuration: the three baselines (file-parallel capped at
# the team size, and uncapped as a labelled upper bound); CoCoder as run by
# default (function granularity: pieces of modules bigger than total/k; a fresh conversation per
# unit, no plan riskier than one sequential agent within a point), at the paper's file granularity,
# with one growing conversation per agent, with the strict risk bound (no margin) and without one
# (the fastest expected makespan)
VARIANTS: dict[str, dict[str, Any]] = {  # TeamConfig fields
    "sequential": {"strategy": "sequential"}, "file-parallel": {"strategy": "file-parallel"},
    # one agent per file, all at once: the upper bound on file-parallel's speed, not a team of k
    "file-parallel-uncapped": {"strategy": "file-parallel-uncapped"},
    "per-file": {"strategy": "per-file"}, "cocoder": {"strategy": "cocoder"},
    "cocoder-file": {"strategy": "cocoder", "granularity": "file"},
    "cocoder-conversation": {"strategy": "cocoder", "context": "conversation"},
    "cocoder-strict": {"strategy": "cocoder", "risk": "sequential+0"},
    "cocoder-fastest": {"strategy": "cocoder", "risk": "any"}}
LABELS = tuple(VARIANTS)
COCODERS = tuple(label for label in LABELS if label.startswith("cocoder"))


def variant_config(label: str, base: TeamConfig) -> TeamConfig:
    return replace(base, **VARIANTS[label])


def _runs(task: str, config: TeamConfig, seeds: tuple[int, ...], cache: TestCache, logs: Path) -> list[dict[str, Any]]:
    return _batch([(task, config, s) for s in seeds], cache, logs)


def _batch(jobs: list[tuple[str, TeamConfig, int]], cache: TestCache, logs: Path) -> list[dict[str, Any]]:
    """Team runs two at a time: the sandboxed test runs wait on the sandbox, not on this process."""
    for task in sorted({job[0] for job in jobs}):
        load_task(task)  # prepare once, before threads share the task cache
    with steps(f"cocoder: {len(jobs)} team runs on {', '.join(sorted({j[0] for j in jobs}))}", len(jobs)) as done:
        def one(job: tuple[str, TeamConfig, int]) -> dict[str, Any]:
            metrics = run_team(job[0], job[1], job[2], logs, tests=cache).record.metrics
            done(f"{job[0]} {job[1].strategy} s{job[2]}")
            return metrics

        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            return list(pool.map(one, jobs))


def _ci(values: list[float]) -> Any:
    return bootstrap_ci(values, seed=0)


# metric -> (higher is better, tolerance in the metric's unit) for the regression gate
GATED = {"pass_rate": (True, 0.05), "makespan": (False, 10.0), "cost_usd": (False, 0.002)}


def gate_metrics(results: dict[str, dict[str, list[dict[str, Any]]]], seeds: tuple[int, ...]) -> list[dict[str, Any]]:
    """Per strategy and metric, the value of each ``repository/seed`` unit (agentbed.results/1)."""
    out = []
    for strategy in [label for label in LABELS if all(label in runs for runs in results.values())]:
        for metric, (higher, tolerance) in GATED.items():
            values = {f"{task}/{seed}": float(runs[strategy][i][metric])
                      for task, runs in results.items() for i, seed in enumerate(seeds)}
            out.append({"suite": "cocoder", "agent": strategy, "metric": metric, "higher_is_better": higher,
                        "tolerance": tolerance, "values": dict(sorted(values.items()))})
    return out


def _intervals(results: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    return {task: {s: {m: _ci([r[m] for r in runs[s]]).to_dict() for m in GATED} for s in runs}
            for task, runs in results.items()}


def _dominates(p: tuple[float, ...], q: tuple[float, ...]) -> bool:
    """Point p Pareto-dominates q (every coordinate lower-is-better)."""
    return all(a <= b for a, b in zip(p, q, strict=True)) and any(a < b for a, b in zip(p, q, strict=True))


def _point(runs: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Mean makespan, cost and minus pass rate: every coordinate lower-is-better."""
    makespan, cost, pass_rate = (float(np.mean([m[k] for m in runs])) for k in ("makespan", "cost_usd", "pass_rate"))
    return makespan, cost, -pass_rate


def dominates(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """Whether runs ``a`` Pareto-dominate runs ``b`` on the means: no slower, no dearer, no lower
    pass rate, and better in one of the three."""
    return _dominates(_point(a), _point(b))


# metric -> +1 where higher is better, -1 where lower is
DIRECTIONS = {"makespan": -1, "cost_usd": -1, "pass_rate": 1}


def dominates_by_intervals(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """Whether runs ``a`` Pareto-dominate runs ``b`` (paired by seed) as the 95% intervals of the
    paired differences show it: significantly better in makespan, cost or pass rate, and
    significantly worse in none (a difference of means inside the noise is no difference)."""
    better = worse = False
    for metric, direction in DIRECTIONS.items():
        d = paired_difference_ci([m[metric] for m in a], [m[metric] for m in b])
        low, high = sorted((direction * d.low, direction * d.high))
        better |= low > 0
        worse |= high < 0
    return better and not worse


def _goal_row(task: str, label: str, runs: dict[str, list[dict[str, Any]]]) -> list[Any]:
    """One CoCoder variant against sequential on the paper's three criteria, and whether it
    Pareto-dominates sequential and file-parallel (with the paired intervals against file-parallel).
    The goal's own wording decides: at least 2x faster, at least 25% cheaper, a mean pass rate
    inside sequential's interval, and dominating both baselines by the paired intervals; the
    column beside it says whether the plain means dominate too."""
    seq, fp, coc = runs["sequential"], runs["file-parallel"], runs[label]
    speed = _ci([a["makespan"] / b["makespan"] for a, b in zip(seq, coc, strict=True)])
    saving = _ci([1 - b["cost_usd"] / a["cost_usd"] for a, b in zip(seq, coc, strict=True)])
    dpass = paired_difference_ci([m["pass_rate"] for m in coc], [m["pass_rate"] for m in seq])
    seq_pass = _ci([m["pass_rate"] for m in seq])
    vs_fp = [paired_difference_ci([m[k] for m in coc], [m[k] for m in fp]) for k in ("makespan", "cost_usd")]
    by_means = dominates(coc, seq) and dominates(coc, fp)
    by_intervals = dominates_by_intervals(coc, seq) and dominates_by_intervals(coc, fp)
    met = (speed.estimate >= 2 and saving.estimate >= 0.25 and by_intervals
           and np.mean([m["pass_rate"] for m in coc]) >= seq_pass.low)
    return [task, label, fmt(speed, 2), fmt(saving, 3), fmt(dpass, 3), fmt(vs_fp[0], 1), fmt(vs_fp[1], 4),
            "yes" if by_means else "no", "yes" if by_intervals else "no", "met" if met else "NOT met"]


def _risk_cell(runs: list[dict[str, Any]]) -> str:
    planned = np.mean([m["planned_residual_risk"] for m in runs])
    failing = sum(m["pass_rate"] < 1.0 for m in runs)
    return f"{planned:.3f} / {failing}/{len(runs)}"


def _risk_ladder(task: str, seeds: tuple[int, ...], cache: TestCache, logs: Path) -> dict[str, Any]:
    """CoCoder on ``task`` at each of the planner's ``RISK_LEVELS`` beside sequential: the trade-off
    between the speed of a plan and the risk its cross-agent dependencies carry, with the Pareto front
    marked, and the planned residual risk beside the runs where a test still failed."""
    base = TeamConfig(agents=AGENTS)
    configs = [("sequential", replace(base, strategy="sequential"))]
    configs += [(f"cocoder --risk {level}", replace(base, risk=level)) for level in RISK_LEVELS]
    done = iter(_batch([(task, cfg, seed) for _, cfg in configs for seed in seeds], cache, logs))
    runs = {label: [next(done) for _ in seeds] for label, _ in configs}
    points = [_point(r) for r in runs.values()]
    front = set(pareto_front(points))
    rows = [[task, label + (" *" if i in front else ""), " / ".join(sorted({m["plan"] for m in r})),
             f"{np.mean([m['messages'] for m in r]):.1f}",
             fmt(_ci([m["pass_rate"] for m in r]), 3), fmt(_ci([m["makespan"] for m in r]), 1),
             fmt(_ci([m["cost_usd"] for m in r]), 4), _risk_cell(r)]
            for i, (label, r) in enumerate(runs.items())]
    return table(f"Risk levels on {task} (seeds {list(seeds)}; * marks the Pareto front in makespan, cost and "
                 "pass rate)", ["repository", "run", "plan", "messages", "pass rate", "makespan s", "cost $",
                                "residual risk: planned / runs with a failing test"], rows,
                 note="--risk sequential keeps plans no riskier than one sequential agent plus one percentage "
                      "point, sequential+0 no riskier at all; a probability bounds the planned residual risk "
                      f"itself; any drops the bound. {COMMAND}")


def _sweep(task: str, seeds: tuple[int, ...], cache: TestCache, logs: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every strategy on ``task`` at each sweep point: the makespan-cost figure and the table with
    the Pareto front marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs: list[tuple[str, TeamConfig]] = []
    for lam in LATENCIES:
        configs.append((f"lambda={lam:g}", TeamConfig(agents=AGENTS, cost=CostModel(latency=lam))))
    for px in CROSS_ERRORS:
        configs.append((f"p_x={px:g}", TeamConfig(agents=AGENTS, failure=FailureModel(p_cross=px))))
    for k in AGENT_COUNTS:
        configs.append((f"k={k}", TeamConfig(agents=k)))
    free = TeamConfig(agents=AGENTS, cost=CostModel(latency=0.0, read_rate=1e12, message_tokens=0),
                      failure=FailureModel(p_cross=0.0))
    configs.append(("free lossless transfer", free))
    fig, axes = plt.subplots(1, len(configs) // 3 + 1, figsize=(4 * (len(configs) // 3 + 1), 3.6), squeeze=False)
    jobs = [(task, variant_config(s, cfg), seed) for _, cfg in configs for s in LABELS for seed in seeds]
    done = iter(_batch(jobs, cache, logs))
    rows = []
    not_dominating: dict[str, list[str]] = {"cocoder": [], "every cocoder variant": []}
    for idx, (label, _) in enumerate(configs):
        points = []
        for s in LABELS:
            points.append(_point([next(done) for _ in seeds]))
            ms, cost, minus_pass = points[-1]
            rows.append([task, label, s, f"{ms:.1f}", f"{cost:.4f}", f"{-minus_pass:.3f}"])
        for i in pareto_front(points):
            rows[-len(LABELS) + i][2] += " *"
        by_label = dict(zip(LABELS, points, strict=True))
        beats = {s: all(_dominates(by_label[s], by_label[b]) for b in ("sequential", "file-parallel")) for s in COCODERS}
        if not beats["cocoder"]:
            not_dominating["cocoder"].append(label)
        if not any(beats.values()):
            not_dominating["every cocoder variant"].append(label)
        ax = axes[0][min(idx // 3, axes.shape[1] - 1)]
        for i, s in enumerate(LABELS):
            ax.scatter(points[i][0], points[i][1], marker="o*sDx^vPh"[i], label=f"{s} ({label})" if idx % 3 == 0 else None)
            ax.annotate(label, points[i][:2], fontsize=6)
        ax.set_xlabel("makespan (virtual s)")
        ax.set_ylabel("cost ($)")
    for ax in axes[0]:
        ax.legend(fontsize=6)
    figure = figure_from_matplotlib(f"Makespan vs cost on {task} per sweep point (* in the table = Pareto-optimal "
                                    "in makespan, cost and pass rate)", fig)
    plt.close(fig)
    return figure, table(f"Sweeps on {task} (mean over seeds {list(seeds)}; * marks the Pareto front in makespan, "
                         "cost and pass rate)", ["repository", "setting", "strategy", "makespan s", "cost $", "pass rate"],
                         rows, note="lambda = message latency, p_x = cross-group error rate, k = agents. Where "
                                    "CoCoder does not Pareto-dominate both sequential and file-parallel (means): "
                                    + "; ".join(f"{who}: {', '.join(where) or 'nowhere'}"
                                                for who, where in not_dominating.items())
                                    + f". {COMMAND}")


def pareto_front(points: Sequence[tuple[float, ...]]) -> list[int]:
    """Indices of points that no other point dominates (every coordinate lower-is-better)."""
    return [i for i, p in enumerate(points) if not any(_dominates(q, p) for j, q in enumerate(points) if j != i)]


def _findings(task: str, runs: dict[str, list[dict[str, Any]]], sens: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The headline findings: CoCoder against sequential on ``task``, and where the cost model's
    constants stop it dominating."""
    seq, coc = runs["sequential"], runs["cocoder"]
    speed = _ci([a["makespan"] / b["makespan"] for a, b in zip(seq, coc, strict=True)])
    saving = _ci([1 - b["cost_usd"] / a["cost_usd"] for a, b in zip(seq, coc, strict=True)])
    dpass = paired_difference_ci([m["pass_rate"] for m in coc], [m["pass_rate"] for m in seq])
    lost = [r for r in sens if not r["dominates_seq"]]
    where = "; ".join(f"{r['constant']}={r['value']:g}" for r in lost[:3]) + (" ..." if len(lost) > 3 else "")
    fp_lost = sum(not r["dominates_fp"] for r in sens)
    return [
        finding(f"speedup vs sequential ({task})", speed, paper="1.81x DevEval, 2.10x CodeProjectEval",
                note="cost model"),
        finding(f"cost saving vs sequential ({task})", saving, paper="28% DevEval, 35% CodeProjectEval",
                note="cost model"),
        finding(f"mean pass rate - sequential's ({task})", dpass, paper="+11.3 DevEval, +14.0 points CPE",
                note="simulated coder, real tests"),
        finding(f"sensitivity ({sens[0]['task'] if sens else task}): dominates sequential",
                f"at {len(sens) - len(lost)} of {len(sens)} points" + (f" (not: {where})" if lost else "")
                + f"; file-parallel at {len(sens) - fp_lost}", note="cost model, planned"),
    ]


def run_demo(out_dir: Path, *, full: bool = False, tasks: list[str] | None = None, seeds: tuple[int, ...] | None = None,
             sweep: bool | None = None, repair_rounds: int = 1, sweep_tasks: list[str] | None = None,
             labels: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The strategies (``labels``) on ``tasks`` over ``seeds``, the goal table, the cost model's
    sensitivity, and (``sweep``) the Pareto sweeps on ``sweep_tasks`` (default: the first task)
    with the first two seeds. ``full`` changes the defaults from the small run to the large one."""
    out_dir = Path(out_dir)
    logs = out_dir / "cocoder" / "episodes"
    fetched = set(task_ids(include_synthetic=False))
    if tasks is None:  # the fetched real repositories, and (full) a larger synthetic one where parallelism has room
        tasks = [t for t in FULL_TASKS if t in fetched] + [SYNTHETIC_TASK] if full else \
            [t for t in SMALL_TASKS if t in fetched] or ["synth-12"]
    seeds = seeds or (SEEDS if full else SMALL_SEEDS)
    labels = labels or (LABELS if full else SMALL_LABELS)
    sweep = full if sweep is None else sweep
    cocoders = [label for label in COCODERS if label in labels]
    cache = TestCache()
    base = TeamConfig(agents=AGENTS, repair_rounds=repair_rounds)
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    rows, heads, goal_rows = [], [], []
    for task in tasks:
        jobs = [(task, variant_config(s, base), seed) for s in labels for seed in seeds]
        done = iter(_batch(jobs, cache, logs))
        results[task] = {s: [next(done) for _ in seeds] for s in labels}
        for s in labels:
            r = results[task][s]
            pr = _ci([m["pass_rate"] for m in r])  # makespan and cost: passing and failing runs apart
            full_pass = _ci([1.0 if m["pass_rate"] >= 1.0 else 0.0 for m in r])
            means = {k: np.mean([m[k] for m in r]) for k in ("tokens", "messages", "cut_edges", "transferred_tokens")}
            rows.append([task, s, fmt(pr), f"{sum(m['pass_rate'] >= 1.0 for m in r)}/{len(r)}",
                         split_by_outcome(r, "makespan", 1), split_by_outcome(r, "cost_usd", 4), f"{means['tokens']:.0f}", f"{means['messages']:.1f}",
                         f"{means['cut_edges']:.1f}", f"{means['transferred_tokens']:.0f}", _risk_cell(r), len(r)])
            heads.append(headline("mean_pass_rate", pr, agent=s, task=task))
            heads.append(headline("share_of_runs_passing_every_test", full_pass, agent=s, task=task))
        goal_rows += [_goal_row(task, label, results[task]) for label in cocoders]
    real = [t for t in tasks if t in fetched] or tasks[:1]
    sens = sweep_fn(real if full else real[:1], ends_only=not full)
    tables = [
        table(f"Per repository and strategy at lambda=20 s, p_x=0.03, {AGENTS} agents (simulated coder; "
              "makespan and cost: cost model)",
              ["repository", "strategy", "mean pass rate", "runs passing every test",
               "makespan s (cost model): passing / failing runs", "cost $ (cost model): passing / failing runs",
               "tokens (context + output)", "messages", "cut edges", "tokens transferred",
               "residual risk: planned / runs with a failing test", "seeds"], rows,
              note=f"{COST_MODEL_SENTENCE} Mean pass rate: passed / the reference's passed tests, averaged over "
                   f"seeds {list(seeds)} (95% bootstrap intervals); runs passing every test: how many of them "
                   "passed all. The planned residual risk is the failure model's chance that some unit is still "
                   "broken after the repairs (mean over seeds), beside the runs in which a test still failed. Cut "
                   "edges: dependencies between units of different agents (file-parallel receives none: it writes "
                   f"against interfaces). Regenerate: {FULL_COMMAND if full else COMMAND}"),
        table("Goal: CoCoder vs sequential (speedup >= 2x, cost saving >= 25%, mean pass rate within sequential's "
              "interval) and Pareto-dominating sequential and file-parallel",
              ["repository", "cocoder variant", "speedup (seq/cocoder)", "cost saving",
               "mean pass rate difference (cocoder - seq)", "makespan s - file-parallel", "cost $ - file-parallel",
               "dominates both (means)", "dominates both (intervals)", "goal"], goal_rows,
              note=f"{COST_MODEL_SENTENCE} Differences are paired over seeds with bootstrap intervals; the "
                   "intervals of speedup and saving come from the repairs' noise alone (where nothing fails "
                   "the ratio is the planned one). 'Dominates (intervals)': significantly better in makespan, "
                   "cost or mean pass rate and significantly worse in none, by the 95% intervals of the paired "
                   f"differences; the goal uses it. With few seeds ({len(seeds)} here; docs/cocoder.md has 30 "
                   "and 100) domination cannot be shown. Where the goal is not met the table says so."),
        sensitivity_table(sens, FULL_COMMAND if full else COMMAND),
    ]
    figures = [sensitivity_figure(sens)]
    for task in (sweep_tasks or tasks[:1]) if sweep else ():
        figure, sweep_table = _sweep(task, seeds[:2], cache, logs)
        figures.append(figure)
        tables += [sweep_table, _risk_ladder(task, seeds, cache, logs)]
    write_results(out_dir / "cocoder" / "results.json", gate_metrics(results, seeds), suite="cocoder",
                  seeds=list(seeds), command=COMMAND, config=base.to_dict(), intervals=_intervals(results))
    n = sum(len(r) for t in results.values() for r in t.values())
    first = next((t for t in tasks if "cocoder" in results[t] and "sequential" in results[t]), None)
    summary = {"suite": "cocoder", "title": "CoCoder: graph-partitioned multi-agent coding", "episodes": n,
               "seeds": len(seeds), "headline": heads, "tables": tables, "figures": figures,
               "command": FULL_COMMAND if full else COMMAND, "test_runs": cache.runs, "config": base.to_dict(),
               "findings": _findings(first, results[first], sens) if first else [],
               "cost_model": COST_MODEL_SENTENCE, "not_dominating": where_not_dominating(sens)}
    write_summary(summary, out_dir / "cocoder" / "summary.json")
    return summary


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m suites.cocoder.demo",
                                     description="The cocoder demo: small by default, --full for the large run.")
    parser.add_argument("out", nargs="?", help="run directory (default: a new temporary one)")
    parser.add_argument("--full", action="store_true", help="every repository and variant, sweeps (tens of minutes)")
    parser.add_argument("--seeds", type=int, help="seeds 0..N-1 (default: 2, or 3 with --full)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the sweeps and the Pareto figure")
    parser.add_argument("--repair-rounds", type=int, default=1, help="leader test-and-repair rounds (default: 1)")
    parser.add_argument("--tasks", help="comma-separated tasks (default: tinydb,zxcvbn; with --full every "
                                        "fetched repository and synth-60)")
    parser.add_argument("--sweep-tasks", help="comma-separated tasks to sweep (default: the first task)")
    args = parser.parse_args()
    if (args.seeds is not None and args.seeds < 1) or args.repair_rounds < 0:
        parser.error("--seeds must be at least 1 and --repair-rounds at least 0")
    target = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="cocoder-demo-"))
    result = run_demo(target, full=args.full, tasks=args.tasks.split(",") if args.tasks else None,
                      seeds=tuple(range(args.seeds)) if args.seeds else None,
                      sweep=False if args.no_sweep else None, repair_rounds=args.repair_rounds,
                      sweep_tasks=args.sweep_tasks.split(",") if args.sweep_tasks else None)
    for t in result["tables"][:2]:
        print(t["title"])
        for row in t["rows"]:
            print("  ", row)
    for f in result["findings"]:
        print(f"{f['label']}: {f['value']} ({f['note']})")
    print(f"summary: {target / 'cocoder' / 'summary.json'} ({result['test_runs']} sandboxed test runs)")
