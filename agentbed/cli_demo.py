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
import shlex
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from agentbed import progress
from agentbed.cli_json import add_json_flag, emit
from agentbed.errors import UsageError
from agentbed.progress import heartbeat
from agentbed.suite import Suite, get_suite, load_suites
from agentbed.summary import findings_lines, findings_of, write_summary

DEMO_ORDER = ("contracts", "oversight", "graphrag", "cocoder", "agentdojo")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run every workload at small sizes, print a summary, write a report")
    p.add_argument("--out", help="run directory (default: runs/demo-TIMESTAMP)")
    p.add_argument("--suites", help=f"comma-separated subset of {','.join(DEMO_ORDER)}")
    p.add_argument("--full", action="store_true",
                   help="each workload's larger run (tens of minutes to hours; see docs/<workload>.md)")
    p.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    add_json_flag(p, "each workload's findings")
    p.set_defaults(func=cmd_demo)


def _offers_full(suite: Suite) -> bool:
    try:
        return "full" in inspect.signature(suite.demo).parameters
    except (TypeError, ValueError):
        return False


def _run_one(suite: Suite, out: Path, full: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        summary = suite.demo(out, full=True) if full else suite.demo(out)
    except Exception:  # noqa: BLE001 - one failing workload must not hide the others
        summary = {"suite": suite.name, "title": suite.name, "error": traceback.format_exc(), "tables": [],
                   "figures": [], "headline": []}
    summary.setdefault("suite", suite.name)
    summary["wall_seconds"] = round(time.perf_counter() - t0, 1)
    write_summary(summary, out / suite.name / "summary.json")
    return summary


def cmd_demo(args: argparse.Namespace) -> int:
    suites = load_suites()
    wanted = args.suites.split(",") if args.suites else [n for n in DEMO_ORDER if n in suites]
    for name in wanted:
        get_suite(name)  # unknown names are a usage error before anything runs
        if suites[name].demo is None:
            raise UsageError(f"--suites: suite {name!r} has no demo")
        if args.full and not _offers_full(suites[name]):
            raise UsageError(f"--full: suite {name!r} has no larger demo (run it with `agentbed run {name}`)")
    progress.set_quiet(args.quiet or args.json)
    out = Path(args.out or f"runs/demo-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}")
    try:
        out.mkdir(parents=True, exist_ok=True)
        command = "agentbed " + shlex.join(sys.argv[1:]) if sys.argv[0].endswith("agentbed") else "agentbed demo"
        meta = {"command": command, "suites": wanted, "kind": "demo", "full": bool(args.full)}
        (out / "run.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {out}: {exc.strerror or exc}") from None
    summaries = []
    started = time.perf_counter()
    for name in wanted:
        if not (args.quiet or args.json):
            print(f"== {name} ...", file=sys.stderr, flush=True)
        with heartbeat(f"{name} demo") if not (args.quiet or args.json) else contextlib.nullcontext():
            summaries.append(_run_one(suites[name], out, args.full))
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
