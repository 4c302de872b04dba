"""``agentbed gate``, ``report`` and ``export``: the verbs that read a finished run (its results
against a baseline, an HTML report, another tool's log format). Apart from ``run`` so that
calling them imports none of what running episodes needs."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from agentbed import cli_json
from agentbed.arguments import check_output_file
from agentbed.cli_json import add_json_flag, emit
from agentbed.errors import UsageError
from agentbed.problems import parse_allowance, within_allowance
from agentbed.results import load_results, without_units
from agentbed.seal import log_key

EXIT_UNDERPOWERED = 5  # nothing regressed, but some metric could not have seen a loss of its tolerance


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gate", help="fail (exit 1) when results regress significantly from a baseline; exit 5"
                                         " when the comparison is too small to see a loss of its tolerance")
    p.add_argument("results", help="a run directory or results.json")
    p.add_argument("--baseline", required=True, help="baseline results.json (see baselines/)")
    p.add_argument("--tolerance", type=float, help="override every metric's tolerance")
    p.add_argument("--allow-missing", action="store_true", help="do not fail on metrics absent from the results")
    p.add_argument("--allow-subset", action="store_true",
                   help="compare on the units in common when the results cover fewer tasks, seeds or agents")
    p.add_argument("--allow-errors", metavar="N|RATE",
                   help="judge a run with up to N errored episodes (or this share: 0.05, 5%%) on the rest; default"
                        " 0: a run with an errored episode fails the gate")
    power = p.add_mutually_exclusive_group()
    power.add_argument("--allow-underpowered", action="store_true",
                       help=f"exit 0 instead of {EXIT_UNDERPOWERED} when metrics passed only because their comparison"
                            " could not see a loss as large as their tolerance (each verdict prints the smallest loss"
                            " it detects); for smoke runs too small to judge")
    power.add_argument("--require-power", action="store_true", help=argparse.SUPPRESS)  # the default since issue 47
    cli_json.add_json_flag(p, "the verdict, the seal's status and every metric's row")
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("report", help="write a self-contained HTML report of a run directory")
    p.add_argument("run_dir")
    p.add_argument("--out", help="HTML file (default: RUN_DIR/report.html)")
    cli_json.add_json_flag(p, "the report's path, the seal's verdict and the log counts")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("export", help="export a run directory to another tool's log format")
    p.add_argument("run_dir")
    p.add_argument("--format", choices=["inspect"], required=True)
    p.add_argument("--out", help="output directory (default: RUN_DIR/inspect)")
    add_json_flag(p, "the files written")
    p.set_defaults(func=cmd_export)


def cmd_gate(args: argparse.Namespace) -> int:
    from agentbed.gate import Unjudgeable, check_judgeable, compare, judge, unbaselined
    from agentbed.provenance import differing_worlds
    from agentbed.seal_verdict import results_seal
    from agentbed.verify_run import is_run_dir

    if args.tolerance is not None and not (math.isfinite(args.tolerance) and args.tolerance >= 0):
        raise UsageError(f"--tolerance must be a finite number >= 0, not {args.tolerance}")
    allowance = parse_allowance(args.allow_errors)
    given = Path(args.results)
    if given.is_dir() and not (given / "results.json").exists() and not is_run_dir(given):
        raise UsageError(f"{given}: no results.json here, and not a run directory")
    seal = results_seal(given, log_key())
    current = load_results(seal.results) if seal.results.exists() or not seal.sealed else None
    baseline = load_results(args.baseline)
    if seal.problems or current is None:
        return _gate_out(args, seal, [], [], f"the results cannot be trusted: {len(seal.problems)} problem(s) "
                         f"(agentbed verify {seal.results.parent} says more)")
    errored, episodes = int(current.get("errored_episodes") or 0), int(current.get("episodes") or 0)
    if errored and not within_allowance(errored, episodes, allowance):
        kinds = ", ".join(f"{p.get('kind')} {p.get('count')}" for p in current.get("problems") or []
                          if isinstance(p, dict) and p.get("excluded", True))
        return _gate_out(args, seal, [], [], f"{errored} of {episodes} episodes errored ({kinds}): their provider "
                         "or set-up failed, so the run measures less than it should; --allow-errors N judges the rest")
    # Errored episodes were scored on neither side: leave them out of the baseline too, and say so.
    baseline, left_out = without_units(baseline, current.get("errored_units") or {}) if errored else (baseline, 0)
    try:
        check_judgeable(current, baseline)
        rows = compare(current, baseline, tolerance=args.tolerance)
    except Unjudgeable as exc:
        raise UsageError(f"{seal.results if exc.side == 'results' else args.baseline}: {exc}") from None
    except ValueError as exc:
        raise UsageError(f"{args.baseline}: {exc}") from None
    if not rows:
        raise UsageError(f"{args.baseline}: no metrics to compare")
    for line in differing_worlds(current.get("provenance"), baseline.get("provenance")):
        print(f"agentbed: warning: {line}", file=sys.stderr)
    allowed = {"allow_missing": args.allow_missing, "allow_subset": args.allow_subset}
    failed, nothing = judge(rows, **allowed, allow_underpowered=getattr(args, "allow_underpowered", False))
    # "underpowered" (exit 5) only when power is all that failed: accepting it would pass
    weak_only = bool(failed) and not nothing and not judge(rows, **allowed, allow_underpowered=True)[0]
    hint = " (--allow-subset compares on the units in common)" if any(r.verdict == "subset" for r in failed) else ""
    why = nothing or f"{len(failed)} of {len(rows)} metrics failed{hint}"
    weak = sum(r.underpowered for r in rows)
    if weak_only:
        why = (f"UNDERPOWERED: {weak} of {len(rows)} metrics could not have seen a loss of their tolerance"
               f" (each names the smallest it detects); more units, a larger tolerance, or --allow-underpowered")
    elif weak and not failed:
        why += (f"; {weak} of {len(rows)} metrics underpowered, accepted by --allow-underpowered: a loss up to the"
                " size each names would pass")
    if errored:
        why += (f"; {errored} of {episodes} episodes errored (allowed by --allow-errors): compared only episodes "
                f"scored on both sides, {left_out} baseline episodes left out")
    new = unbaselined(current, baseline)  # named, never judged: nothing to regress from (docs/cli.md)
    if new:
        why += (f"; not judged, the baseline has no entry for {len(new)} results metric{'s' if len(new) != 1 else ''}: "
                f"{', '.join(new[:10])}{', ...' if len(new) > 10 else ''} (add them to the baseline to gate them)")
    return _gate_out(args, seal, rows, failed, why if (failed or nothing) else "", passed=why, errored=errored,
                     left_out=left_out, weak_only=weak_only, made={"results": current.get("provenance"),
                                                                   "baseline": baseline.get("provenance")},
                     unbaselined=new)


def _gate_out(args: argparse.Namespace, seal: Any, rows: list[Any], failed: list[Any], failure: str,
              passed: str = "", errored: int = 0, left_out: int = 0, weak_only: bool = False,
              made: dict[str, Any] | None = None, unbaselined: list[str] | None = None) -> int:
    """Print the gate's verdict (or its --json document); exit 1 on a failure, EXIT_UNDERPOWERED
    when the only failures are metrics too small to see a loss of their tolerance. ``made``: each
    side's provenance (agentbed.provenance), printed so a reader sees which code each side ran."""
    from agentbed.gate import explain
    from agentbed.provenance import describe

    status = 0 if not failure else EXIT_UNDERPOWERED if weak_only else 1
    verdict = "pass" if not failure else "underpowered" if weak_only else "FAIL"
    if args.json:
        cli_json.emit("gate", {
            "ok": not failure, "verdict": verdict, "reason": failure or passed,
            "results": str(seal.results), "sealed": seal.sealed, "seal": seal.summary, "seal_problems": seal.problems,
            "errored_episodes": errored, "left_out": left_out, "provenance": made or {},
            "not_in_baseline": unbaselined or [],
            "rows": [{"suite": r.suite, "agent": r.agent, "metric": r.metric, "verdict": r.verdict, "units": r.units,
                      "current": r.current, "baseline": r.baseline, "tolerance": r.tolerance,
                      "difference": None if r.diff is None else
                      {"estimate": r.diff.estimate, "low": r.diff.low, "high": r.diff.high},
                      "failed": r in failed, "detail": r.detail, "missing_units": list(r.missing_units),
                      "extra_units": list(r.extra_units),
                      "minimum_detectable_effect": r.mde}
                     for r in rows]})
        return status
    for problem in seal.problems:
        print(problem)
    print(f"seal: {seal.summary}")
    for side, record in (made or {}).items():
        print(f"{side} made by: {describe(record)}")
    for row in rows:
        print(explain(row))
    print(f"gate: {verdict.upper() if failure else verdict} ({failure or passed})")
    return status


def cmd_report(args: argparse.Namespace) -> int:
    """Exit 0: the seal verified (or, for a directory that is no sealed run, without a key,
    every file read and every log verified); 1: the seal failed, the run is incomplete, a log
    changed or is missing (the report shows which, the seal's verdict at its top); 2: a file is
    unreadable or malformed (named on stderr; the report, written anyway, lists every such file)."""
    from agentbed.report.render import render_run
    from agentbed.seal_verdict import seal_status

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a run directory")
    out = Path(args.out) if args.out else None
    check_output_file(out, "--out")
    key = log_key()
    seal = seal_status(run_dir, key)  # the same verification as `agentbed verify`
    try:
        path, run = render_run(run_dir, out, seal=seal, key=key)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write the report ({exc.strerror or exc})") from None
    malformed = [p for p in run.problems if p.malformed]
    logs_bad = run.episodes.logs_bad
    sealed_bad = seal.state in ("failed", "incomplete") or (seal.state == "unsealed" and key is not None)
    status = 2 if malformed or seal.state == "malformed" else (1 if logs_bad or sealed_bad else 0)
    if args.json:
        cli_json.emit("report", {"ok": status == 0, "report": str(path), "seal": {
            "state": seal.state, "headline": seal.headline, "problems": seal.problems},
            "logs": len(run.episodes), "logs_verified": run.episodes.verified,
            "malformed": [{"file": p.file, "message": p.message} for p in malformed]})
    else:
        print(path)  # stdout is the report's path alone (scripts open it); the seal's verdict opens the page
    if malformed:
        more = f" (and {len(malformed) - 1} more; see the report)" if len(malformed) > 1 else ""
        raise UsageError(f"{run_dir / malformed[0].file}: {malformed[0].message}{more}")
    if seal.state == "malformed":
        raise UsageError(seal.problems[0])
    return status


def cmd_export(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a run directory")
    out = Path(args.out) if args.out else run_dir / "inspect"
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    check_output_file(out / "x", "--out")
    from agentbed.export.episodes import load_episodes

    malformed: list[str] = []
    try:
        # a malformed run and an --out that cannot be made are refused before the import of inspect_ai
        # (about 2 s of CPU); the same steps, in the same order, as export_inspect takes them
        episodes = load_episodes(run_dir)
        out.mkdir(parents=True, exist_ok=True)
        from agentbed.export import export_inspect

        paths = export_inspect(run_dir, out, malformed, episodes)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write the export ({exc.strerror or exc})") from None
    if getattr(args, "json", False):
        emit("export", {"run_dir": str(run_dir), "format_out": args.format, "out": str(out),
                        "files": [str(p) for p in paths], "malformed": malformed})
    else:
        for path in paths:
            print(path)
    if malformed:  # exported as sample errors; still bad input
        more = f" (and {len(malformed) - 1} more, exported as sample errors)" if len(malformed) > 1 else ""
        raise UsageError(malformed[0] + more)
    return 0


