"""``agentbed cocoder-plan PATH``: the dependency graph, hubs, groups and simulated schedule per
strategy (no agent runs). PATH is a repository (a checkout or an sdist, as ``run cocoder --repo``
takes it) or a task id: the task is prepared as the run prepares it (the reference's tests and
the blanking, in the sandbox), so the preview is exactly the plan the run uses. A bare package
folder (with ``__init__.py``) is planned from its source alone: no blanking, so every module
counts as work."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agentbed.errors import UsageError
from controllers.cocoder.chunking import GRANULARITIES
from controllers.cocoder.partition import METHODS, find_hubs
from controllers.cocoder.plan import Plan
from controllers.cocoder.schedule import Schedule, residual_risk
from controllers.cocoder.strategies import CONTEXTS, STRATEGIES, make_plan, risk_level, simulate_plan
from environments.cocoder.costmodel import CostModel, FailureModel
from environments.cocoder.depgraph import build_dependency_graph, cycles
from environments.cocoder.tasks import MODULES_SUFFIX, SYNTH_PREFIX, RepoTask, load_task, task_ids
from environments.cocoder.userrepo import USER_PREFIX
from suites.cocoder.planning import MAX_AGENTS, TeamConfig, plan_team, work_graph
from suites.cocoder.suite import resolve_task
from suites.cocoder.summary import COST_MODEL_SENTENCE, UPPER_BOUND


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("cocoder-plan", help="dependency graph, CoCoder partition and simulated schedule "
                                                   "of a Python package")
    p.add_argument("package_dir", metavar="PATH",
                   help="a repository (checkout or sdist) or task id: the run's plan; or a package folder "
                        "(with __init__.py): its source alone, without the blanking")
    p.add_argument("--package", help="with a repository: the package, when it has several")
    p.add_argument("--tests", help="with a repository: the test folder (and pytest arguments)")
    p.add_argument("--modules", default="", help="only these modules (comma-separated) to write, the rest given, "
                                                 "as `run cocoder --modules` (also TASK@modules=a,b as PATH)")
    p.add_argument("--strategy", choices=STRATEGIES, action="append", help="default: every strategy")
    p.add_argument("--team-size", "--agents", dest="agents", type=int, default=3,
                   help="agents working at once (k), as `run cocoder --team-size`; --agents is the older name")
    p.add_argument("--method", choices=METHODS, default="louvain")
    p.add_argument("--granularity", choices=GRANULARITIES, default="function",
                   help="cocoder: split modules bigger than total/k by definitions (function: the planner "
                        "picks; simultaneous/ordered: forced) or not (file)")
    p.add_argument("--context", choices=CONTEXTS, default="fresh",
                   help="cocoder: a new conversation per unit (fresh) or one per agent (conversation)")
    p.add_argument("--risk", type=risk_level, default="sequential",
                   help="cocoder: no plan riskier than one sequential agent plus one point (sequential) or plus "
                        "a margin (sequential+0 is strict), the fastest (any), or no plan whose residual risk "
                        "exceeds a probability (e.g. 0.05)")
    p.add_argument("--latency", type=float, default=20.0, help="seconds per cross-agent message")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=handle)


def _task(args: argparse.Namespace) -> RepoTask | None:
    """The task PATH names, prepared as a run prepares it; None for a bare package folder."""
    path = Path(args.package_dir)
    if path.is_dir() and (path / "__init__.py").is_file():
        if args.modules:
            raise UsageError("--modules: needs a repository or task id (a bare package folder has no blanking)")
        return None
    if not path.exists():
        base = args.package_dir.partition(MODULES_SUFFIX)[0]
        if base in task_ids() or base.startswith(SYNTH_PREFIX):
            return load_task(resolve_task(args.package_dir, {"modules": args.modules}))
        raise UsageError(f"PATH: {path} is neither a file, a folder nor a task id ({', '.join(task_ids())})")
    return load_task(resolve_task(USER_PREFIX, {"repo": str(path), "package": args.package, "tests": args.tests,
                                                "modules": args.modules}))


def _planned(task: RepoTask, config: TeamConfig, seed: int) -> tuple[Plan, Schedule]:
    _, plan, schedule = plan_team(task, config, seed)
    return plan, schedule


def handle(args: argparse.Namespace) -> int:
    if not 1 <= args.agents <= MAX_AGENTS:
        raise UsageError(f"--team-size must be between 1 and {MAX_AGENTS} (agents working at once), not {args.agents}")
    task = _task(args)
    package = Path(args.package_dir) if task is None else task.tree / task.package
    graph = build_dependency_graph(package) if task is None else work_graph(task)
    cost = CostModel(latency=args.latency)
    hubs = find_hubs(graph)
    blanked = None if task is None else sum(len(mt.blanked) for mt in task.modules.values())
    report = {"package": str(package), "task": task.name if task else None, "blanked_functions": blanked,
              "modules": graph.number_of_nodes(), "edges": graph.number_of_edges(),
              "cycles": cycles(graph), "in_hubs": list(hubs.in_hubs), "out_hubs": list(hubs.out_hubs),
              "strategies": {}, "cost_model": COST_MODEL_SENTENCE,
              "untested": {} if task is None else task.untested,
              "tests_reaching": {} if task is None else task.tests_reaching,
              "notes": [] if task is None else task.notes}
    split: set[str] = set()  # modules the cocoder plan wrote as pieces
    for strategy in args.strategy or STRATEGIES:
        if task is None:
            plan = make_plan(graph, strategy, args.agents, method=args.method, seed=args.seed,
                             granularity=args.granularity, cost=cost, context=args.context, risk=args.risk)
            sched = simulate_plan(graph, plan, cost)
        else:  # exactly what run_team plans: the work graph of blanked modules, the skeleton's sizes
            plan, sched = _planned(task, TeamConfig(strategy=strategy, agents=args.agents, method=args.method,
                                                    cost=cost, granularity=args.granularity, context=args.context,
                                                    risk=args.risk), args.seed)
        split |= {p.module for p in plan.pieces.values()}
        context = sum(t.context_tokens for t in sched.turns)
        report["strategies"][strategy] = {
            "groups": plan.groups if strategy == "cocoder" else len(plan.groups), "plan": plan.variant or strategy,
            "hub_pieces": sorted(n for n, p in plan.pieces.items() if p.hub),
            "late_pieces": sorted(n for n, p in plan.pieces.items() if p.late), "makespan": round(sched.makespan, 1),
            "critical_path": round(sched.critical_path, 1), "messages": sched.messages,
            "residual_risk": round(residual_risk(sched, FailureModel()), 4),
            **({"upper_bound": UPPER_BOUND[strategy]} if strategy in UPPER_BOUND else {}),
            "figures_from": "cost model",  # makespan, critical path and cost: arithmetic, not a clock or a bill
            "context_tokens": context, "cost_usd": round(cost.dollars(context, sum(t.out_tokens for t in sched.turns),
                                                                      sched.messages), 5)}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{package}: {report['modules']} modules, {report['edges']} import edges")
    if task is None:
        print("  (the package's source alone: no blanking, every module is work; give the repository or task "
              "to preview the run's plan)")
    else:
        print(f"  task {task.name}: {blanked} function bodies blanked in {report['modules']} modules with work; "
              f"{task.reference_tests} reference tests pass in the sandbox (the run's plan)")
    for note in report["notes"]:
        print(f"  {note}")
    for cycle in report["cycles"]:
        how = "split into pieces" if set(cycle) <= split else "written by one agent"
        print(f"  import cycle of {len(cycle)} modules ({how}): {', '.join(cycle)}")
    print(f"  in-hubs: {', '.join(hubs.in_hubs) or 'none'}; out-hubs: {', '.join(hubs.out_hubs) or 'none'}")
    for strategy, r in report["strategies"].items():
        print(f"{strategy:>13}: makespan {r['makespan']:8.1f} s (cost model; critical path {r['critical_path']:.1f}), "
              f"cost ${r['cost_usd']:.4f} (cost model), {r['messages']} messages, residual risk "
              f"{r['residual_risk']:.4f} (failure model)")
        if strategy in UPPER_BOUND:
            print(f"{'':>15}({UPPER_BOUND[strategy]}: an upper bound on speed, not a team of --team-size)")
        if strategy == "cocoder":
            print(f"{'':>15}plan: {r['plan']}; hub pieces (written first): {', '.join(r['hub_pieces']) or 'none'}; "
                  f"late pieces (wait for other modules): {', '.join(r['late_pieces']) or 'none'}")
            for i, group in enumerate(r["groups"]):
                print(f"{'':>15}group {i}: {', '.join(group)}")
    print(f"  {COST_MODEL_SENTENCE}")
    return 0
