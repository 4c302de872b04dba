"""CLI verbs that run things: list, run, demo, gate, report, export."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from agentbed.cli_approval import add_approver_options, approver_config, asking
from agentbed.cli_models import (
    add_cost,
    add_model_options,
    check_model_options,
    cost_line,
    model_runtime,
    record_stop,
)
from agentbed.cost import cost_metrics
from agentbed.errors import UsageError
from agentbed.executors import EXECUTORS, execute
from agentbed.executors_ray import parse_resources
from agentbed.results import episode_metrics, load_results, suite_summary, write_results
from agentbed.runner import EpisodeSpec
from agentbed.seal import log_key
from agentbed.store import RunStore
from agentbed.suite import Suite, SuiteError, broken_suites, get_suite, load_suites
from agentbed.summary import write_summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list suites, their tasks and agents")
    p.add_argument("suite", nargs="?", help="show one suite in detail")
    p.add_argument("--json", action="store_true", help="print suites, tasks (with what the suite says of each) "
                   "and agents as one JSON document")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="run a suite's episodes into a run directory")
    p.add_argument("suite")
    p.add_argument("--task", action="append", help="task id (repeatable; default: all)")
    p.add_argument("--agent", help="agent name(s), comma-separated (default: the suite's default)")
    p.add_argument("--model", help="provider:model for the LangChain chat agent, e.g. openai:gpt-4o-mini;"
                   " local:gemma-3-270m or local:FILE.gguf serves a local model for the run")
    p.add_argument("--seeds", type=int, help="number of seeds per task (default: the suite's)")
    p.add_argument("--seed-start", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--executor", choices=EXECUTORS, default="process")
    p.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: CPU count)")
    p.add_argument("--address", help="Ray cluster address (with --executor ray)")
    p.add_argument("--ray-resource", action="append", metavar="NAME=AMOUNT",
                   help="a custom Ray resource each episode's task needs, e.g. gpu_node=1 (repeatable)")
    p.add_argument("--degrade", type=float, default=None, metavar="RATE",
                   help="damage this share of the agent's actions on purpose (to test metrics and gates)")
    p.add_argument("--out", help="run directory (default: runs/SUITE-TIMESTAMP)")
    p.add_argument("--resume", action="store_true", help="finish the run recorded in --out")
    p.add_argument("--quiet", action="store_true", help="no progress bar or table")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary")
    add_model_options(p)
    add_approver_options(p)
    p.set_defaults(func=cmd_run, accepts_extra=True)

    p = sub.add_parser("gate", help="fail (exit 1) when results regress significantly from a baseline")
    p.add_argument("results", help="a run directory or results.json")
    p.add_argument("--baseline", required=True, help="baseline results.json (see baselines/)")
    p.add_argument("--tolerance", type=float, help="override every metric's tolerance")
    p.add_argument("--allow-missing", action="store_true", help="do not fail on metrics absent from the results")
    p.add_argument("--allow-subset", action="store_true",
                   help="compare on the units in common when the results cover fewer tasks, seeds or agents")
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("report", help="write a self-contained HTML report of a run directory")
    p.add_argument("run_dir")
    p.add_argument("--out", help="HTML file (default: RUN_DIR/report.html)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("export", help="export a run directory to another tool's log format")
    p.add_argument("run_dir")
    p.add_argument("--format", choices=["inspect"], required=True)
    p.add_argument("--out", help="output directory (default: RUN_DIR/inspect)")
    p.set_defaults(func=cmd_export)


# -- list -------------------------------------------------------------------------------------
def suite_listing(suite: Suite) -> dict[str, Any]:
    """One suite as ``agentbed list --json`` prints it; tasks carry the suite's ``describe_task``."""
    tasks = suite.task_ids(suite.resolve_options({}))
    return {"name": suite.name, "description": suite.description, "default_agent": suite.default_agent,
            "agents": suite.agent_names(), "default_seeds": suite.default_seeds,
            "options": {k: {"default": o.default, "help": o.help,
                            "choices": list(o.choices) if o.choices is not None else None}
                        for k, o in suite.options.items()},
            "tasks": [{"id": t, "hidden": t in suite.hidden_tasks,
                       **(suite.describe_task(t) if suite.describe_task else {})} for t in tasks]}


def cmd_list(args: argparse.Namespace) -> int:
    suites = load_suites()
    names = [args.suite] if args.suite else sorted(suites)
    if getattr(args, "json", False):
        doc = {"suites": [suite_listing(get_suite(name)) for name in names],
               "unavailable": dict(sorted(broken_suites().items()))}
        print(json.dumps(doc, indent=1, default=str))
        return 0
    for name in names:
        suite = get_suite(name)
        tasks = suite.task_ids(suite.resolve_options({}))
        print(f"{suite.name}: {suite.description}")
        print(f"  agents: {', '.join(suite.agent_names())} (default {suite.default_agent}); any --model provider:model")
        if suite.options:
            opts = ", ".join(f"--{k} ({o.default})" for k, o in suite.options.items())
            print(f"  options: {opts}")
        shown = tasks if args.suite else tasks[:6]
        more = "" if len(shown) == len(tasks) else f" ... ({len(tasks)} in all)"
        print(f"  tasks: {', '.join(shown)}{more}")
    for name, why in sorted(broken_suites().items()):
        print(f"{name}: unavailable ({why})")
    return 0


# -- run --------------------------------------------------------------------------------------
def parse_suite_options(extra: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    i = 0
    while i < len(extra):
        item = extra[i]
        if not item.startswith("--") or item == "--":
            raise UsageError(f"unexpected argument {item!r}")
        name, eq, value = item[2:].partition("=")
        if not eq:
            if i + 1 >= len(extra) or extra[i + 1].startswith("--"):
                raise UsageError(f"option --{name} needs a value")
            value, i = extra[i + 1], i + 1
        options[name.replace("-", "_")] = value
        i += 1
    return options


def plan(suite: Suite, args: argparse.Namespace) -> tuple[list[EpisodeSpec], dict[str, Any]]:
    options = suite.resolve_options(parse_suite_options(args.extra))
    known = suite.task_ids(options)
    tasks = args.task or [t for t in known if t not in suite.hidden_tasks]
    _refuse_duplicates("--task", tasks)
    for task in tasks:
        if task not in known:
            raise SuiteError(f"suite {suite.name!r} has no task {task!r} (see: agentbed list {suite.name})")
    if suite.check_tasks is not None:
        suite.check_tasks(tasks, options)
    if args.model and args.agent:
        raise UsageError("give --agent or --model, not both")
    agents = [f"model:{args.model}"] if args.model else (args.agent.split(",") if args.agent else [suite.default_agent])
    _refuse_duplicates("--agent", agents)
    for agent in agents:
        if not agent.startswith("model:") and not suite.has_agent(agent):
            raise SuiteError(f"suite {suite.name!r} has no agent {agent!r} (agents: {', '.join(suite.agent_names())})")
    if args.model and ":" not in args.model:
        raise UsageError(f"--model {args.model!r}: expected provider:model, e.g. openai:gpt-4o-mini")
    served_on_nodes = args.executor == "ray" and args.model.startswith("local:") if args.model else False
    if args.model and not served_on_nodes:  # a missing provider package or key: an error before anything runs
        suite.make_agent(EpisodeSpec(suite.name, tasks[0], agents[0], 0, options))
    n = args.seeds if args.seeds is not None else suite.default_seeds
    if n < 1:
        raise UsageError(f"--seeds must be at least 1, not {n}")
    seeds = list(range(args.seed_start, args.seed_start + n))
    degrade = 0.0 if args.degrade is None else args.degrade
    if not 0.0 <= degrade <= 1.0:  # also refuses nan
        raise UsageError(f"--degrade must be between 0 and 1, not {degrade}")
    specs = [EpisodeSpec(suite.name, t, a, s, options, degrade) for a in agents for t in tasks for s in seeds]
    meta = {"suite": suite.name, "tasks": tasks, "agents": agents, "seeds": seeds, "options": options,
            "degrade": degrade,
            "command": "agentbed " + shlex.join(sys.argv[1:] if sys.argv[0].endswith("agentbed") else [])}
    return specs, meta


def _refuse_duplicates(option: str, names: list[str]) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise UsageError(f"{option}: {name!r} is given twice (each episode would be run and counted twice)")
        seen.add(name)


def resume_plan(suite: Suite, meta: dict[str, Any], args: argparse.Namespace, where: str) -> list[EpisodeSpec]:
    """The recorded plan, after checking it against the suite and against every argument the
    user gave: an argument that contradicts run.json is an error naming both, never ignored."""
    given = None
    if any(v is not None for v in (args.task, args.agent, args.model, args.seeds, args.degrade)) \
            or args.seed_start != 0 or args.extra:
        given, _ = plan(suite, args)
    checks = (("--task", args.task is not None, "tasks", lambda s: s.task),
              ("--agent/--model", args.agent is not None or args.model is not None, "agents", lambda s: s.agent),
              ("--seeds/--seed-start", args.seeds is not None or args.seed_start != 0, "seeds", lambda s: s.seed))
    for option, passed, name, part in checks:
        mine = sorted({part(s) for s in given}) if given else []
        if passed and mine != sorted(meta[name]):
            raise UsageError(f"{option} contradicts {where}: field {name!r} is {meta[name]}, not {mine}")
    if args.degrade is not None and args.degrade != meta.get("degrade", 0.0):
        raise UsageError(f"--degrade contradicts {where}: field 'degrade' is {meta.get('degrade', 0.0)}")
    for name in parse_suite_options(args.extra):
        if given and given[0].options.get(name) != meta["options"].get(name):
            raise UsageError(f"--{name} contradicts {where}: field 'options.{name}' is {meta['options'].get(name)!r}")
    try:
        known = suite.task_ids(suite.resolve_options(meta["options"]))
    except SuiteError as exc:
        raise UsageError(f"{where}: field 'options': {exc}") from None
    for task in meta["tasks"]:
        if task not in known:
            raise UsageError(f"{where}: field 'tasks' names {task!r}, which suite {suite.name!r} does not have")
    for agent in meta["agents"]:
        if not agent.startswith("model:") and not suite.has_agent(agent):
            raise UsageError(f"{where}: field 'agents' names {agent!r}, which suite {suite.name!r} does not have")
    return [EpisodeSpec(suite.name, t, a, s, meta["options"], meta.get("degrade", 0.0))
            for a in meta["agents"] for t in meta["tasks"] for s in meta["seeds"]]


def cmd_run(args: argparse.Namespace) -> int:
    from agentbed.agents.local.server import serving

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"-j/--jobs must be at least 1, not {args.jobs}")
    if args.executor != "ray" and (args.address or args.ray_resource):
        raise UsageError("--address and --ray-resource need --executor ray")
    log_key()  # a key that is set but unusable is an error before anything runs
    if not args.resume:
        args.out = args.out or f"runs/{args.suite}-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    recorded = RunStore(args.out) if args.resume and args.out else None
    agents = [args.model or ""] if recorded is None else recorded.meta()["agents"]
    if args.executor == "ray":  # Ray workers serve a local:MODEL on their own nodes (agentbed.worker)
        agents = []
    with serving(agents, Path(args.out or ".")):  # a local:MODEL's server, for the whole run
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    ray_resources = parse_resources(args.ray_resource)
    if args.resume:
        if not args.out:
            raise UsageError("--resume needs --out RUN_DIR")
        store = RunStore(args.out)
        meta = store.meta()
        where = str(store.root / "run.json")
        if meta["suite"] != args.suite:
            raise UsageError(f"{args.suite!r} contradicts {where}: field 'suite' is {meta['suite']!r}")
        suite = get_suite(meta["suite"])
        specs = resume_plan(suite, meta, args, where)
        prices, budget = check_model_options(args, specs)
        store.open_existing()
    else:
        suite = get_suite(args.suite)
        specs, meta = plan(suite, args)
        prices, budget = check_model_options(args, specs)
        store = RunStore(args.out)
        approver = approver_config(args, Path(args.out))
        store.create({**meta, "executor": "serial" if approver else args.executor,
                      **({"approver": approver.to_dict()} if approver else {})})
    store.discard_partial()
    if approver_config(args, store.root) is not None:
        args.executor = "serial"  # one question at a time; the terminal belongs to this process
    done = store.finished_ids()
    todo = [s for s in specs if s.episode_id not in done]
    runtime = model_runtime(args, todo, store.root)
    t0 = time.perf_counter()
    ran = 0
    with asking(approver_config(args, store.root)), \
            _progress(len(todo), quiet=args.quiet or args.json or args.approver is not None) as advance:
        for record in execute(todo, store.root, executor=args.executor, jobs=args.jobs, ray_address=args.address,
                              runtime=runtime, stop=budget.reason, ray_resources=ray_resources):
            store.append(record)
            budget.add(record)
            ran += 1
            advance()
    wall = time.perf_counter() - t0
    stop = record_stop(store.root, budget, len(todo) - ran)
    records = [r for r in store.records() if r["suite"] == suite.name]
    command = meta.get("command", f"agentbed run {suite.name}")
    summary = suite.summarize(records, meta["options"]) if suite.summarize else suite_summary(suite.name, records, command)
    cost = add_cost(summary, records, prices)
    write_summary(summary, store.root / suite.name / "summary.json")
    write_results(store.root / "results.json", episode_metrics(records) + cost_metrics(records, prices),
                  episodes=len(records), seeds=sorted({r["seed"] for r in records}))
    store.finish(["results.json", f"{suite.name}/summary.json"])  # the seal: complete if nothing is owed
    if args.json:
        print(json.dumps({"run_dir": str(store.root), "episodes": len(records), "ran": ran,
                          "wall_seconds": round(wall, 3), "headline": summary.get("headline", []),
                          "cost": cost, "stopped": stop}, default=str))
    elif not args.quiet:
        print_headlines([summary])
        print(f"{ran} episodes run in {wall:.1f}s ({len(records)} in {store.root})")
        if cost is not None or stop is not None:
            print(cost_line(cost, stop))
    elif stop is not None:
        print(cost_line(None, stop), file=sys.stderr)
    return 3 if stop is not None else 0


class _progress:
    """A rich progress bar on a terminal; nothing otherwise."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.enabled = total, not quiet and sys.stderr.isatty() and total > 1

    def __enter__(self):  # noqa: ANN204
        if not self.enabled:
            return lambda: None
        from rich.progress import Progress

        self.bar = Progress(transient=True, console=None)
        self.bar.start()
        task = self.bar.add_task("episodes", total=self.total)
        return lambda: self.bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()


def print_headlines(summaries: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="agentbed summary (95% bootstrap intervals)")
    for column in ("workload", "metric", "who", "estimate", "interval", "n"):
        table.add_column(column)
    for summary in summaries:
        if summary.get("error"):
            table.add_row(summary.get("suite", "?"), "FAILED", "", "", summary["error"].splitlines()[-1][:60], "")
            continue
        for h in summary.get("headline", []):
            who = ", ".join(str(h[k]) for k in h if k not in {"metric", "estimate", "low", "high", "n",
                                                              "higher_is_better", "confidence", "seeds"}
                            and isinstance(h[k], str))
            table.add_row(summary.get("suite", ""), h["metric"], who, f"{h['estimate']:.3f}",
                          f"[{h['low']:.3f}, {h['high']:.3f}]", str(h.get("n", "")))
    # a log file or a pipe gets the full width rather than rich's 80-column default
    Console(width=None if sys.stdout.isatty() else 160).print(table)


# -- gate, report, export ---------------------------------------------------------------------
def cmd_gate(args: argparse.Namespace) -> int:
    from agentbed.gate import compare, explain, judge

    if args.tolerance is not None and not (math.isfinite(args.tolerance) and args.tolerance >= 0):
        raise UsageError(f"--tolerance must be a finite number >= 0, not {args.tolerance}")
    current, baseline = load_results(args.results), load_results(args.baseline)
    check_sealed_results(Path(args.results))
    try:
        rows = compare(current, baseline, tolerance=args.tolerance)
    except ValueError as exc:
        raise UsageError(f"{args.baseline}: {exc}") from None
    if not rows:
        raise UsageError(f"{args.baseline}: no metrics to compare")
    failed, nothing = judge(rows, allow_missing=args.allow_missing, allow_subset=args.allow_subset)
    for row in rows:
        print(explain(row))
    if nothing:
        print(f"gate: FAIL ({nothing})")
        return 1
    hint = " (--allow-subset compares on the units in common)" if any(r.verdict == "subset" for r in failed) else ""
    print(f"gate: {'FAIL' if failed else 'pass'} ({len(failed)} of {len(rows)} metrics failed){hint}")
    return 1 if failed else 0


def check_sealed_results(path: Path) -> None:
    """A run's results.json must be the one its manifest sealed (with a key, an authentic one)."""
    from agentbed import manifest

    results = path / "results.json" if path.is_dir() else path
    root = results.parent
    if results.name != "results.json" or not (root / manifest.MANIFEST).is_file() or not results.is_file():
        return
    doc = manifest.load(root)
    why = manifest.authentic(doc, log_key())
    if why:
        raise UsageError(f"{root / manifest.MANIFEST}: {why}")
    sealed = doc["files"].get("results.json")
    if sealed is not None and manifest.file_digest(results) != sealed:
        raise UsageError(f"{results}: differs from the digest its run's manifest sealed (edited after the run?)")


def _render(run_dir: Path, out: str | None) -> Path:
    from agentbed.report import render_report

    return render_report(run_dir, Path(out)) if out else render_report(run_dir)


def cmd_report(args: argparse.Namespace) -> int:
    """Exit 0: every file read and every log verified; 1: a log changed or is missing (the
    report shows which); 2: a file is unreadable or malformed (named on stderr; the report,
    written anyway, lists every such file)."""
    from agentbed.report.render import render_run

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a run directory")
    out = Path(args.out) if args.out else None
    _check_output_file(out, "--out")
    try:
        path, run = render_run(run_dir, out)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write the report ({exc.strerror or exc})") from None
    print(path)
    malformed = [p for p in run.problems if p.malformed]
    if malformed:
        more = f" (and {len(malformed) - 1} more; see the report)" if len(malformed) > 1 else ""
        raise UsageError(f"{run_dir / malformed[0].file}: {malformed[0].message}{more}")
    return 1 if any(e.log_check != "verified" for e in run.episodes) else 0


def _check_output_file(path: Path | None, option: str) -> None:
    """An output file's path must not be a directory, and its directory must be creatable."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory, expected a file name")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{option} {path}: {parent} is not a directory")
            if not os.access(parent, os.W_OK):
                raise UsageError(f"{option} {path}: {parent} is not writable")
            break


def cmd_export(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a run directory")
    from agentbed.export import export_inspect

    out = Path(args.out) if args.out else run_dir / "inspect"
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    _check_output_file(out / "x", "--out")
    malformed: list[str] = []
    try:
        paths = export_inspect(run_dir, out, malformed)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write the export ({exc.strerror or exc})") from None
    for path in paths:
        print(path)
    if malformed:  # exported as sample errors; still bad input
        more = f" (and {len(malformed) - 1} more, exported as sample errors)" if len(malformed) > 1 else ""
        raise UsageError(malformed[0] + more)
    return 0


