"""`agentbed run`: a suite's episodes into a run directory (gate, report and export, which read a
finished run, are in cli_verdicts)."""

from __future__ import annotations

import argparse
import datetime as _dt
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from agentbed.agents.connections import append_event
from agentbed.agents.generation import parse_settings
from agentbed.approval import ApproverConfig
from agentbed.binding import binding
from agentbed.cli_approval import add_approver_options, approver_config, asking, resumed_approver
from agentbed.cli_json import emit
from agentbed.cli_models import (
    add_cost,
    add_model_options,
    check_model_options,
    cost_line,
    model_runtime,
    model_timeout,
    record_stop,
)
from agentbed.cli_plan import add_plan_options, limited, plan, resume_plan
from agentbed.code_versions import ALLOW_FLAG, CodeTally, check_resume, started_by
from agentbed.cost import cost_metrics
from agentbed.errors import UsageError
from agentbed.executors import EXECUTORS, execute
from agentbed.executors_ray import parse_resources
from agentbed.inflight import EVENTS
from agentbed.jsonstream import Streamed
from agentbed.manifest import MANIFEST
from agentbed.planned import Planned
from agentbed.problems import (
    EXIT_ERRORS,
    classify,
    is_errored,
    parse_allowance,
    problem_lines,
    within_allowance,
)
from agentbed.progress import RunProgress
from agentbed.provenance import header_provenance
from agentbed.results import errored_units, write_results
from agentbed.run_summary import RunTally, add_paired_differences, annotate_errors
from agentbed.seal import log_key
from agentbed.seal_verdict import open_for_resume
from agentbed.store import RunStore
from agentbed.suite import Suite, get_suite, is_suite_reference
from agentbed.summary import write_summary

MAX_JOBS = 256  # worker processes; -j is also capped at the number of episodes to run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a suite's episodes into a run directory")
    p.add_argument("suite", help="an installed suite's name (agentbed list), or a suite in one file: "
                   "path/to/suite.py, path/to/file.py:NAME or my.module:NAME (docs/extending.md)")
    add_plan_options(p)
    p.add_argument("--executor", choices=EXECUTORS, default=None,
                   help="process (default), serial or ray; --resume: the recorded one unless given")
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="worker processes (default: CPU count; --resume: the recorded -j unless given)")
    p.add_argument("--address", help="Ray cluster address (with --executor ray)")
    p.add_argument("--ray-resource", action="append", metavar="NAME=AMOUNT",
                   help="a custom Ray resource each episode's task needs, e.g. gpu_node=1 (repeatable)")
    p.add_argument("--degrade", type=float, default=None, metavar="RATE",
                   help="damage this share of the agent's actions on purpose (to test metrics and gates)")
    p.add_argument("--out", help="run directory (default: runs/SUITE-TIMESTAMP)")
    p.add_argument("--resume", action="store_true", help="finish the run recorded in --out")
    p.add_argument(ALLOW_FLAG, action="store_true",
                   help="with --resume: go on under other code than the run was started with (recorded: results.json"
                        " and verify then name every code version that wrote episodes)")
    p.add_argument("--retry-errors", action="store_true",
                   help="with --resume: run the errored episodes again (their old logs are kept in RUN_DIR/retried)")
    p.add_argument("--allow-errors", metavar="N|RATE",
                   help="exit 0 with up to N errored episodes (or this share of them: 0.05, 5%%); default 0: "
                        f"any errored episode makes the run exit {EXIT_ERRORS}")
    p.add_argument("--quiet", action="store_true", help="no progress bar or table")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary (schema: docs/cli.md)")
    add_model_options(p)
    add_approver_options(p)
    p.set_defaults(func=cmd_run, accepts_extra=True)


# -- run --------------------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace) -> int:
    from agentbed.agents.local.server import ServerSettings, serving

    if args.jobs is not None and not 1 <= args.jobs <= MAX_JOBS:
        raise UsageError(f"-j/--jobs must be between 1 and {MAX_JOBS}, not {args.jobs}")
    parse_allowance(args.allow_errors)
    for flag, given in (("--retry-errors", args.retry_errors), (ALLOW_FLAG, args.allow_mixed_code)):
        if given and not args.resume:
            raise UsageError(f"{flag} needs --resume --out RUN_DIR")
    log_key()  # a key that is set but unusable is an error before anything runs
    if not args.resume:
        name = get_suite(args.suite).name if is_suite_reference(args.suite) else args.suite
        args.out = args.out or f"runs/{name}-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    recorded = RunStore(args.out).meta() if args.resume and args.out else {}
    for option, name in (("executor", "executor"), ("jobs", "jobs"), ("max_connections", "max_connections")):
        if getattr(args, option) is None:  # how to run, not what: given now, else as recorded (docs/engine.md)
            setattr(args, option, recorded.get(name))
    args.executor = args.executor or "process"
    if args.executor != "ray" and (args.address or args.ray_resource):
        raise UsageError("--address and --ray-resource need --executor ray")
    agents = list(args.roster or []) if not recorded else recorded["agents"]
    if args.executor == "ray":  # Ray workers serve a local:MODEL on their own nodes (agentbed.worker)
        agents = []
    with serving(agents, Path(args.out or "."), ServerSettings.for_connections(args.max_connections),
                 announce=not (args.quiet or args.json)):  # for the whole run
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    parse_resources(args.ray_resource)  # a malformed --ray-resource: an error before anything is recorded
    allowance = parse_allowance(args.allow_errors)
    generation = parse_settings(args.temperature, args.max_tokens_per_call, args.model_setting)
    if args.resume and not args.out:
        raise UsageError("--resume needs --out RUN_DIR")
    store = RunStore(args.out)
    with store:  # the writer lock, let go however the run ends (a refused resume too: a caller may try again)
        if args.resume:
            suite, meta, recorded, specs, prices, budget, approver = _resume(args, store, generation)
        else:
            suite = get_suite(args.suite)
            try:
                specs, meta = plan(suite, args, generation)
            except UsageError as exc:
                keep_evidence(exc, Path(args.out))
                raise
            prices, budget = check_model_options(args, specs)
            approver = approver_config(args, Path(args.out))
            if args.timeout is not None:
                meta["timeout"] = args.timeout
            if args.cache is False:
                meta["cache"] = False
            for name in ("jobs", "max_connections"):  # honoured by --resume when it is not given again
                if getattr(args, name) is not None:
                    meta[name] = getattr(args, name)
            recorded = store.create({**meta, "executor": "serial" if approver else args.executor,
                                     **({"approver": approver.to_dict()} if approver else {})})
        # every log's header names this run and its settings (agentbed.binding): run.json's, as written
        # (not read back: it lists the plan's N seeds)
        bound = binding(recorded)
        specs = specs.with_fields(run=bound)
        with model_timeout(args, meta):
            return _run_episodes(args, store, suite, meta, specs, prices, budget, allowance, approver)


def _resume(args: argparse.Namespace, store: RunStore, generation: dict[str, Any]) -> tuple[Any, ...]:
    """The recorded run, checked against every argument given and against this code, verified and
    opened for writing: (suite, meta, recorded, specs, prices, budget, approver)."""
    meta = store.meta()
    where = str(store.root / "run.json")
    suite = get_suite(meta.get("suite_ref") or meta["suite"])
    if meta["suite"] != args.suite and get_suite(args.suite).name != meta["suite"]:
        raise UsageError(f"{args.suite!r} contradicts {where}: field 'suite' is {meta['suite']!r}")
    specs = resume_plan(suite, meta, args, where, generation)
    prices, budget = check_model_options(args, specs)
    if args.timeout is not None and meta.get("timeout") != args.timeout:  # absent: each model's default
        recorded_timeout = meta.get("timeout", "not set (each model's default)")
        raise UsageError(f"--timeout {args.timeout:g} contradicts {where}: field 'timeout' is {recorded_timeout}")
    if meta.get("cache") is False:  # recorded --no-cache: a resumed episode takes no reply another run left
        if args.cache:
            raise UsageError(f"--cache contradicts {where}: field 'cache' is false (the run was made with --no-cache)")
        args.cache = False
    approver = resumed_approver(args, meta.get("approver"), where, store.root)
    store.lock()  # a second writer is named first; nothing is written before the checks below
    check_resume(meta, header_provenance(suite.name), where, args.allow_mixed_code)  # refused unless allowed
    open_for_resume(store)  # verified first: a damaged or differently signed run is refused
    # --retry-errors runs every errored episode again; a plain --resume, those a budget cut short
    again = store.set_aside({r["episode_id"] for r in store.records() if is_errored(r) and (
        args.retry_errors or classify(str(r.get("error") or "")).name == "budget")})
    if again:
        what = "errored" if args.retry_errors else "cut short by --max-cost/--max-tokens"
        print(f"agentbed: {len(again)} {what} episodes set aside to run again (their logs: "
              f"{store.root / 'retried'})", file=sys.stderr)
    return suite, meta, meta, specs, prices, budget, approver


def keep_evidence(exc: UsageError, run_dir: Path) -> None:
    """Copy the files a refusal names (``exc.evidence``) into ``run_dir/refused/`` and name the
    copies in its message (a file that cannot be copied stays named where it is)."""
    message = str(exc)
    for i, source in enumerate(exc.evidence):
        target = run_dir / "refused" / (f"{i}-" * bool(i) + Path(source).name)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        except OSError:
            continue
        message = message.replace(source, str(target))
    exc.args = (message,)


def _run_episodes(args: argparse.Namespace, store: RunStore, suite: Suite, meta: dict[str, Any],
                  specs: Planned, prices: Any, budget: Any, allowance: float | int,
                  approver: ApproverConfig | None) -> int:
    from agentbed.agents.local.watch import ServerWatch, restarts

    ray_resources = parse_resources(args.ray_resource)
    store.discard_partial()
    if approver is not None:
        args.executor = "serial"  # one question at a time; the terminal belongs to this process
    done = store.finished_ids()
    todo = limited([s for s in specs if s.episode_id not in done] if done else specs, args.limit)
    runtime = model_runtime(args, todo, store.root, budget)
    t0 = time.perf_counter()
    ran = 0
    with asking(approver), ServerWatch() as watch, \
            RunProgress(len(todo), quiet=args.quiet or args.json or approver is not None,
                        cost=lambda: budget.spent_usd) as progress:
        store.on_finished = progress.advance  # an episode is shown done once its index line is durable
        store.group_commit()
        for record in execute(todo, store.root, executor=args.executor, jobs=args.jobs, ray_address=args.address,
                              runtime=runtime, stop=lambda: budget.reason() or watch.reason(),
                              ray_resources=ray_resources):
            store.append(record)
            budget.add(record)
            ran += 1
        store.flush()
        dead = watch.settle()  # after the last episode: a death the watch had no time to see is named too
    wall = time.perf_counter() - t0
    agents = meta.get("agents") or sorted({r["agent"] for r in store.stream_records()})
    tally = RunTally(keep_scored=suite.summarize is not None, paired=len(agents) > 1)
    code = CodeTally(started_by(meta)) if args.resume else None  # a fresh run's episodes are all this code's
    cut = 0
    for r in store.stream_records():  # one record at a time: a run's memory does not grow with its index
        if is_errored(r) and classify(str(r.get("error") or "")).name == "budget":
            cut += 1
        if r["suite"] == suite.name:
            tally.add(r)
        if code is not None:
            code.add_record(store.root, r)
    stop = record_stop(store.root, budget, len(todo) - ran, cut)
    if restarts() or dead:
        append_event(store.root / EVENTS, {"event": "local_server", "restarts": restarts(), "stopped": dead})
    summary, cost = _summarize(suite, meta, tally, agents, prices)
    made = meta.get("provenance")
    if code is not None and code.mixed:  # said in results.json, the summary and on the terminal
        made = {**(made or {}), "mixed": code.versions()}
        summary.setdefault("console_notes", []).append(code.words(suite.name))
        if args.quiet or args.json:  # else printed under the table, with the workload's notes
            print(f"agentbed: {code.words(suite.name)}", file=sys.stderr)
    write_summary(summary, store.root / suite.name / "summary.json")
    errors = summary["errors"]
    episodes = tally.total
    write_results(store.root / "results.json",  # the values per unit and the seeds written as they are read
                  tally.metrics.metrics(streamed=True) + cost_metrics(tally.usage, prices),
                  episodes=episodes, seeds=Streamed(tally.seeds, pairs=False),
                  errored_episodes=errors["episodes"], errored_units=errored_units(tally.errors),
                  problems=errors["problems"], seal=MANIFEST,
                  **({"provenance": made} if made else {}))
    store.finish(["results.json", f"{suite.name}/summary.json"])  # the seal: complete if nothing is owed
    status = run_status(errors["episodes"] - (cut if stop is not None else 0), episodes, allowance, stop)
    if dead:  # the run stopped with episodes owed: never a success
        status = EXIT_ERRORS
    if args.json:
        emit("run", {"run_dir": str(store.root), "episodes": episodes, "ran": ran,
                     "wall_seconds": round(wall, 3), "headline": summary.get("headline", []),
                     "errored_episodes": errors["episodes"], "problems": errors["problems"],
                     "cost": cost, "stopped": stop, "exit_status": status})
    elif not args.quiet:
        print_headlines([summary])
        print(f"{ran} episodes run in {wall:.1f}s ({episodes} in {store.root})")
        if cost is not None or stop is not None:
            print(cost_line(cost, stop))
    elif stop is not None:
        print(cost_line(None, stop), file=sys.stderr)
    for line in problem_lines(errors["problems"], episodes):
        print(line, file=sys.stderr)
    if dead:
        print(f"stopped: {dead}; {len(todo) - ran} episodes not run: --resume --out {store.root} runs them",
              file=sys.stderr)
    if status == EXIT_ERRORS:
        print(f"agentbed: {errors['episodes']} episodes errored (allowed: {args.allow_errors or 0}); exit "
              f"{EXIT_ERRORS}. --resume --retry-errors --out {store.root} re-runs them; --allow-errors N accepts"
              " them", file=sys.stderr)
    return status


def _summarize(suite: Suite, meta: dict[str, Any], tally: RunTally, agents: list[str], prices: Any,
               ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The workload's summary of the episodes that did not error, with what run adds: the errored
    episodes it left out, each agent's paired difference from the reference, the cost."""
    command = meta.get("command", f"agentbed run {suite.name}")
    if suite.summarize and tally.scored:
        summary = suite.summarize(tally.scored, meta["options"])
    else:
        summary = tally.rates.summary(suite.name, command)
    if tally.pairs is not None:
        reference = meta.get("reference") or agents[0]
        add_paired_differences(summary, tally.pairs.rows(reference), reference, len(tally.errored))
    annotate_errors(summary, tally.errors, tally.total)
    cost = add_cost(summary, tally.usage, prices)
    return summary, cost


def run_status(errored: int, total: int, allowance: float | int, stop: dict[str, Any] | None) -> int:
    """The exit status of a run (docs/cli.md): 4 errored episodes beyond --allow-errors, else
    3 stopped at a budget with episodes left, else 0."""
    if errored and not within_allowance(errored, total, allowance):
        return EXIT_ERRORS
    return 3 if stop is not None else 0


def print_headlines(summaries: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="agentbed summary (95% bootstrap intervals; errored episodes excluded)")
    for column in ("workload", "metric", "who", "estimate", "interval", "n", "errored"):
        table.add_column(column)
    for summary in summaries:
        if summary.get("error"):
            table.add_row(summary.get("suite", "?"), "FAILED", "", "", summary["error"].splitlines()[-1][:60], "")
            continue
        for h in summary.get("headline", []):
            who = ", ".join(str(h[k]) for k in h if k not in {"metric", "estimate", "low", "high", "n",
                                                              "higher_is_better", "confidence", "seeds",
                                                              "errors_excluded"}
                            and isinstance(h[k], str))
            table.add_row(summary.get("suite", ""), h["metric"], who, f"{h['estimate']:.3f}",
                          f"[{h['low']:.3f}, {h['high']:.3f}]", str(h.get("n", "")), str(h.get("errors_excluded", "")))
        shown = {h.get("agent") for h in summary.get("headline", [])}
        for agent, n in ((summary.get("errors") or {}).get("by_agent") or {}).items():
            if agent not in shown:  # every episode of this agent errored: no rate at all
                table.add_row(summary.get("suite", ""), "(no rate)", agent, "", "every episode errored", "0", str(n))
    # a log file or a pipe gets the full width rather than rich's 80-column default
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    for summary in summaries:  # what a workload says must not go unseen (timeouts, unrepaired failures)
        for note in summary.get("console_notes", []) or []:
            print(f"{summary.get('suite', '')}: {note}")
