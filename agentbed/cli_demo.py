"""``agentbed demo``: every workload at small size, a one-screen summary, an HTML report.

Each suite's ``demo(out_dir)`` runs its workload for real at a size that keeps the whole demo
within a few minutes on two cores; ``--full`` asks each for its larger run (``demo(out_dir,
full=True)``, where the suite offers one). The summary printed is the workloads' ``findings``
(agentbed.summary.findings_lines); the report opens with the same block.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import inspect
import json
import multiprocessing
import os
import shlex
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from agentbed import progress
from agentbed.cli_json import add_json_flag, emit
from agentbed.errors import UsageError
from agentbed.factories import add_controller_option, controllers_of, oversee_every_episode
from agentbed.progress import heartbeat
from agentbed.suite import Suite, get_suite, load_suites
from agentbed.summary import findings_lines, findings_of, write_summary

THREADS_ENV = "AGENTBED_LOCAL_THREADS"  # agentbed.agents.local.server's, named here to keep start-up light

DEMO_ORDER = ("contracts", "oversight", "graphrag", "cocoder", "agentdojo", "control")
# Started first when workloads run side by side: the longest (its local model waits on its server
# while another workload has the other core), then the rest in the summary's order.
LONGEST_FIRST = ("contracts", "graphrag", "cocoder")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run every workload at small sizes, print a summary, write a report")
    p.add_argument("--out", help="run directory (default: runs/demo-TIMESTAMP)")
    p.add_argument("--suites", help=f"comma-separated subset of {','.join(DEMO_ORDER)}")
    p.add_argument("--full", action="store_true",
                   help="each workload's larger run (tens of minutes to hours; see docs/<workload>.md)")
    p.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="workloads run side by side, each in its own process (default: 2 on two or more cores, "
                        "else 1); the summaries do not depend on it")
    add_controller_option(p)
    add_json_flag(p, "each workload's findings")
    p.set_defaults(func=cmd_demo)


def _offers_full(suite: Suite) -> bool:
    if suite.demo is None:
        return False
    try:
        return "full" in inspect.signature(suite.demo).parameters
    except (TypeError, ValueError):
        return False


def _run_one(suite: Suite, out: Path, full: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    assert suite.demo is not None  # cmd_demo refuses a suite without one
    try:
        summary = suite.demo(out, full=True) if full else suite.demo(out)
    except Exception:  # noqa: BLE001 - one failing workload must not hide the others
        summary = {"suite": suite.name, "title": suite.name, "error": traceback.format_exc(), "tables": [],
                   "figures": [], "headline": []}
    summary.setdefault("suite", suite.name)
    summary["wall_seconds"] = round(time.perf_counter() - t0, 1)
    write_summary(summary, out / suite.name / "summary.json")
    return summary


def _run_side_by_side(suites: dict[str, Suite], wanted: list[str], out: Path, full: bool, jobs: int,
                      quiet: bool) -> list[dict[str, Any]]:
    """Each workload in a forked process of its own, ``jobs`` at a time, longest first; the
    summaries come back in ``wanted``'s order from the files each writes. A local model's server
    gets one thread (``AGENTBED_LOCAL_THREADS``, unless set): the other core is another workload's."""
    context = multiprocessing.get_context("fork")  # the children inherit the loaded suites
    queue = sorted(wanted, key=lambda n: (LONGEST_FIRST.index(n) if n in LONGEST_FIRST else len(LONGEST_FIRST),
                                          wanted.index(n)))
    running: dict[str, Any] = {}
    summaries: dict[str, dict[str, Any]] = {}
    beat = heartbeat(f"demo, {jobs} workloads at a time") if not quiet else contextlib.nullcontext()
    with _environment(THREADS_ENV, "1"), beat:
        while queue or running:
            while queue and len(running) < jobs:
                name = queue.pop(0)
                if not quiet:
                    print(f"== {name} ...", file=sys.stderr, flush=True)
                running[name] = context.Process(target=_child, args=(suites[name], out, full, quiet), name=name)
                running[name].start()
            for name, process in list(running.items()):
                process.join(timeout=0.1)
                if process.exitcode is not None:
                    del running[name]
                    summaries[name] = _summary_of(name, out, process.exitcode)
                    if not quiet:
                        print(f"   {name} demo: done in {summaries[name].get('wall_seconds', '?')} s", file=sys.stderr,
                              flush=True)
    return [summaries[name] for name in wanted]


def _child(suite: Suite, out: Path, full: bool, quiet: bool) -> None:
    with progress.quieted(quiet):
        _run_one(suite, out, full)
    sys.stdout.flush()
    sys.stderr.flush()


def _summary_of(name: str, out: Path, exitcode: int) -> dict[str, Any]:
    """The summary a workload's process wrote, or an error summary saying how the process ended."""
    from agentbed.validate import read_json

    path = out / name / "summary.json"
    if exitcode == 0 and path.is_file():
        return read_json(path)
    summary = {"suite": name, "title": name, "tables": [], "figures": [], "headline": [],
               "error": f"the {name} demo's process ended with exit code {exitcode} before writing {path}"}
    write_summary(summary, path)
    return summary


@contextlib.contextmanager
def _environment(key: str, value: str) -> Any:
    """``key=value`` in the environment for the block, unless the user set ``key``."""
    if key in os.environ:
        yield
        return
    os.environ[key] = value
    try:
        yield
    finally:
        os.environ.pop(key, None)


def cmd_demo(args: argparse.Namespace) -> int:
    suites = load_suites()
    wanted = args.suites.split(",") if args.suites else [n for n in DEMO_ORDER if n in suites]
    for name in wanted:
        get_suite(name)  # unknown names are a usage error before anything runs
        if suites[name].demo is None:
            raise UsageError(f"--suites: suite {name!r} has no demo")
        if args.full and not _offers_full(suites[name]):
            raise UsageError(f"--full: suite {name!r} has no larger demo (run it with `agentbed run {name}`)")
    controllers = controllers_of(args)  # over the episodes each demo runs through the engine's executors
    unreached = [name for name in wanted if not suites[name].demo_overseeable]
    if controllers and unreached:
        raise UsageError(f"--controller: no controller would oversee the {', '.join(unreached)} demo"
                         f"{'s: they play' if len(unreached) > 1 else ': it plays'} episodes outside the engine's executors "
                         "(choose demos it reaches with --suites, or `agentbed run SUITE --controller`)")
    oversee_every_episode(controllers)
    try:  # both are process-wide: undone, so a demo called in-process leaves nothing behind
        with progress.quieted(args.quiet or args.json):
            return _demo(args, suites, wanted, controllers)
    finally:
        oversee_every_episode(())


def _demo(args: argparse.Namespace, suites: dict[str, Suite], wanted: list[str], controllers: tuple[str, ...]) -> int:
    out = Path(args.out or f"runs/demo-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        command = "agentbed " + shlex.join(sys.argv[1:]) if sys.argv[0].endswith("agentbed") else "agentbed demo"
        meta = {"command": command, "suites": wanted, "kind": "demo", "full": bool(args.full),
                **({"controllers": list(controllers)} if controllers else {})}
        (out / "run.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {out}: {exc.strerror or exc}") from None
    started = time.perf_counter()
    jobs = args.jobs if args.jobs is not None else min(2, os.cpu_count() or 1)
    if not 1 <= jobs <= len(DEMO_ORDER):
        raise UsageError(f"-j/--jobs must be between 1 and {len(DEMO_ORDER)}, not {jobs}")
    quiet = args.quiet or args.json
    if jobs == 1 or len(wanted) == 1:
        summaries = []
        for name in wanted:
            if not quiet:
                print(f"== {name} ...", file=sys.stderr, flush=True)
            with heartbeat(f"{name} demo") if not quiet else contextlib.nullcontext():
                summaries.append(_run_one(suites[name], out, args.full))
    else:
        summaries = _run_side_by_side(suites, wanted, out, args.full, jobs, quiet)
    from agentbed.report import render_report

    report = render_report(out)
    status = 1 if any(s.get("error") for s in summaries) else 0
    if args.json:
        emit("demo", {"out": str(out), "report": str(report), "wall_seconds": round(time.perf_counter() - started, 1),
                      "workloads": [{"suite": s.get("suite"), "wall_seconds": s.get("wall_seconds"),
                                     "episodes": s.get("episodes"), "seeds": s.get("seeds"),
                                     "failed": (str(s["error"]).strip().splitlines() or ["?"])[-1] if s.get("error")
                                     else None, "findings": findings_of(s)} for s in summaries],
                      "exit_status": status})
        return status
    print("\n".join(findings_lines(summaries)))
    print(f"{len(wanted)} workloads in {time.perf_counter() - started:.0f} s; every table: {report}")
    return status
