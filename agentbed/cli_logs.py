"""CLI verbs over trajectory logs: verify, replay, branch."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agentbed import cli_json
from agentbed import manifest as mf
from agentbed.cli_json import add_json_flag, emit
from agentbed.decisions import Decision, decisions
from agentbed.errors import UsageError, printable
from agentbed.factories import add_controller_option
from agentbed.log import (
    LogFormatError,
    decode_action,
    first_system_prompt,
    looks_like_log,
    read_log,
    system_prompt_of,
    verify_log_file,
)
from agentbed.rundir import team_members
from agentbed.scores import outcome_scores, scores_text
from agentbed.seal import KEY_VAR, key_id, key_note, log_key
from agentbed.store import read_index
from agentbed.verify_run import check_run, is_run_dir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="check the SHA-256 chain of logs (files or run directories)")
    p.add_argument("paths", nargs="+")
    cli_json.add_json_flag(p, "every path's verdict and problems")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("replay", help="show a log step by step, or re-execute it and report the first divergence")
    p.add_argument("log")
    p.add_argument("--step", type=int, help="show only step N")
    p.add_argument("--rerun", action="store_true", help="re-execute with the recorded actions and compare")
    add_json_flag(p, "the episode (or the rerun's verdict)")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("branch", help="run candidate agents from step N of a recorded episode")
    p.add_argument("log")
    p.add_argument("--at", type=int, required=True, help="number of prefix steps to keep")
    p.add_argument("--agents", required=True, help="comma-separated agent names of the log's suite; "
                                                    "'continue' is the recorded agent carrying on")
    p.add_argument("--rollouts", type=int, default=1)
    p.add_argument("--method", choices=["auto", "snapshot", "replay"], default="auto")
    p.add_argument("--out", help="directory for the branch logs (default: beside the log, in branches/)")
    add_controller_option(p)
    add_json_flag(p, "the branches")
    p.set_defaults(func=cmd_branch)


def _log_files(path: Path) -> tuple[list[tuple[Path, str | None]], list[str]]:
    """Logs under a directory to verify, each with the digest an index or a team manifest
    recorded for it, and the problems found on the way (a manifest naming a missing log).
    A malformed index or manifest raises InputError naming it."""
    digests: dict[Path, str | None] = {}
    for index in sorted(path.rglob("index.jsonl")):
        for r in read_index(index):
            if r.get("log") and r.get("digest"):
                digests[(index.parent / r["log"]).resolve()] = r["digest"]
    problems = []
    for manifest in sorted(path.rglob("*.team.json")):
        # a team manifest (multi-agent runs) lists every member's log with its final digest
        for member in team_members(manifest):
            log = (manifest.parent / member["log"]).resolve()
            if not log.exists():
                problems.append(f"{manifest}: member log {member['log']} is missing")
            digests[log] = member.get("digest")
    files = sorted(f for f in path.rglob("*.jsonl") if f.name != "index.jsonl" and f.is_file())
    # every log an index or manifest lists is checked; other JSONL files (datasets a workload
    # wrote) only when their first line says they are trajectories
    return [(f, digests.get(f.resolve())) for f in files
            if f.resolve() in digests or _looks_like_log(f)], problems


def unsealed_runs(path: Path) -> list[str]:
    """Under a key, missing is failure: every directory under ``path`` that holds what a run
    writes (``episodes/``, an index, a results file) but no manifest, neither its own nor an
    enclosing run's, is a problem naming what is missing (its manifest, run.json and index may
    have been deleted to pass it off as a plain folder of logs)."""
    marks = [*path.rglob("episodes"), *path.rglob("index.jsonl"), *path.rglob("results.json")]
    found = []
    for folder in sorted({m.parent for m in marks if not m.is_symlink()}):
        if any((d / mf.MANIFEST).exists() for d in (folder, *folder.parents) if d.is_relative_to(path)):
            continue
        held = [n for n in ("episodes/", "index.jsonl", "results.json") if (folder / n.rstrip("/")).exists()]
        found.append(f"{folder}: holds {', '.join(held)} but no {mf.MANIFEST}, and a key is set: the run's seal "
                     "is missing (deleted?), so nothing signed vouches for what is here")
    return found


def _looks_like_log(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return looks_like_log(fh.readline(4096))
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from None


def _verify_one(path: Path, digest: str | None, key: bytes | None) -> tuple[bool, str]:
    result = verify_log_file(path, digest or None, key)
    return result.ok, result.message(str(path))


def cmd_verify(args: argparse.Namespace) -> int:
    key = log_key()
    for raw in args.paths:
        if not raw.strip():
            raise UsageError("verify: an empty path names nothing to verify")
    bad = 0
    total = 0
    notes = []
    checked: list[dict] = []
    for raw in args.paths:
        path = Path(raw)
        if path.is_dir() and is_run_dir(path):
            check = check_run(path, key)  # a run the store wrote: sealed, complete, consistent
            bad += len(check.problems)
            total += check.logs
            notes.append(f"{path}: {check.summary}")
            checked.append({"path": str(path), "kind": "run", "ok": not check.problems, "run_id": check.run_id,
                            "logs": check.logs, "logs_ok": check.logs_ok, "summary": check.summary,
                            "signature": check.signature, "problems": check.problems})
            continue
        if path.is_dir():
            files, problems = _log_files(path)
            if key is not None:
                problems += unsealed_runs(path)
            if not files and not problems:
                raise UsageError(f"{path}: no trajectory logs here; nothing to verify")
        elif path.exists():
            files, problems = [(path, None)], []
        else:
            raise UsageError(f"{path}: no such file or directory")
        for log, digest in files:
            ok, message = _verify_one(log, digest, key)
            if not ok:
                problems.append(message)
        bad += len(problems)
        total += len(files)
        checked.append({"path": str(path), "kind": "logs", "ok": not problems, "logs": len(files),
                        "logs_ok": len(files) - len(problems), "problems": problems})
    unchecked = sum(entry.get("signature") == "not checked" for entry in checked)
    if unchecked:  # the hash chains hold; the signature, the only thing a forger cannot redo, was not looked at
        note = (f"{unchecked} signed run{'s' if unchecked != 1 else ''}: signature (HMAC) NOT checked, no key was "
                f"given ({KEY_VAR} unset); set it to check the signature")
        verdict = (f"{total} logs checked, {bad} problem{'s' if bad != 1 else ''}; {note}" if bad else
                   f"{total} of {total} logs' hash chains verified; {note}")
    else:
        verdict = (f"{total} logs checked, {bad} problem{'s' if bad != 1 else ''}; {key_note(key)}" if bad else
                   f"{total} of {total} logs verified; {key_note(key)}")
    if args.json:
        cli_json.emit("verify", {"ok": not bad, "key_id": key_id(key) if key else None, "problems": bad,
                                 "verdict": verdict, "paths": checked})
        return 1 if bad else 0
    for entry in checked:
        for problem in entry["problems"]:
            print(problem)
    for note in notes:
        print(note)
    print(verdict)
    return 1 if bad else 0


def cmd_replay(args: argparse.Namespace) -> int:
    path = Path(args.log)
    records = read_log(path)
    if args.rerun:
        from agentbed.replay import first_divergence, rerun

        recorded, replayed = rerun(path)
        divergence = first_divergence(recorded, replayed)
        if getattr(args, "json", False):
            emit("replay", {"log": str(path), "rerun": True, "identical": divergence is None,
                            "divergence": None if divergence is None else divergence.message()})
        else:
            print("identical" if divergence is None else divergence.message())
        return 0 if divergence is None else 1
    steps = [r for r in records if r.get("type") == "step"]
    last = max([len(steps), *(r.get("i", 0) for r in records if r.get("type") == "control")])  # a blocked step
    if args.step is not None and not 1 <= args.step <= last:
        raise UsageError(f"--step {args.step}: the log has steps 1..{last}")
    if getattr(args, "json", False):
        emit("replay", {"log": str(path), **_episode_doc(records, args.step)})
        return 0
    _show(records, args.step)
    return 0


def _episode_doc(records: list[dict], only: int | None) -> dict:
    """``replay --json``: the header's identity, each step (action decoded), the footer's outcome."""
    header, footer = records[0], records[-1]
    steps = []
    for r in records:
        if r.get("type") != "step" or (only is not None and r["i"] != only):
            continue
        action = decode_action(r["action"])
        steps.append({"i": r["i"], "system_prompt": system_prompt_of(r),
                      "action": action if isinstance(action, str) else None,
                      "action_bytes": None if isinstance(action, str) else action.hex(),
                      "observation": r["observation"], "reward": r["reward"], "terminated": r["terminated"],
                      "truncated": r["truncated"], "clock": r["clock"], "usage": r.get("usage"),
                      "risk": r.get("risk"), "control": r.get("control"), "agent": r.get("agent")})
    outcome = None
    if footer.get("type") == "footer":
        outcome = {k: footer.get(k) for k in ("status", "stop_reason", "success", "total_reward", "steps",
                                              "virtual_seconds", "tokens", "labels", "error")}
        outcome["scores"] = outcome_scores(footer.get("metrics"))
    return {"rerun": False, "system_prompt": first_system_prompt(records), "episode_id": header.get("episode_id"), "suite": header.get("suite"),
            "task": header.get("task"), "agent": header.get("agent_id"), "seed": header.get("seed"),
            "observation": header.get("observation"), "controllers": header.get("controllers") or [],
            "steps": steps, "outcome": outcome,
            "decisions": [d.to_dict() for d in decisions(records) if only is None or d.step == only]}


def _show(records: list[dict], only: int | None) -> None:
    from rich.console import Console
    from rich.panel import Panel

    console = Console()
    header, footer = records[0], records[-1]
    if only is None:
        named = "  ".join(f"{k} {_clip(str(header.get(f)), 200)}" for k, f in (("suite", "suite"), ("task", "task"),
                                                                          ("agent", "agent_id"), ("seed", "seed")))
        console.print(Panel(f"{named}\n{_clip(header.get('observation', ''))}",
                            title=_clip(str(header["episode_id"]), 200)))
    for r in records:
        if r.get("type") != "step" or (only is not None and r["i"] != only):
            continue
        action = decode_action(r["action"])
        prompt = system_prompt_of(r)
        if prompt is not None:  # recorded with the first call that sent it (and again if it changed)
            console.print(Panel(_clip(prompt, 4000), title=f"system prompt (sent from step {r['i']})"))
        extra = []
        if r.get("usage"):
            extra.append(f"tokens {r['usage'].get('total_tokens')}")
        if r.get("risk") is not None:
            extra.append(f"risk {r['risk']:.2f}")
        decided = next((d for d in decisions([r]) if d.step == r["i"]), None)
        if decided is None and r.get("control"):
            extra.append(f"control {_clip(json.dumps(r['control']), 300)}")
        console.print(Panel(f"[bold]action[/bold] {_clip(action if isinstance(action, str) else repr(action))}\n"
                            f"[bold]observation[/bold] {_clip(r['observation'])}\n"
                            f"reward {r['reward']}  clock +{r['clock'] - (header.get('clock') or 0):.0f}s  " + "  ".join(extra),
                            title=f"step {r['i']}"))
        if decided is not None:
            console.print(_decision_panel(decided))
    for decided in decisions([r for r in records if r.get("type") == "control"]):
        if only is None or decided.step == only:
            console.print(_decision_panel(decided))
    if only is None and footer.get("type") == "footer":
        scores = scores_text(footer.get("metrics"))
        console.print(_clip(f"status {footer['status']}  success {footer['success']}  " + (f"{scores}  " if scores else "")
                            + f"steps {footer['steps']}  labels {', '.join(map(str, footer.get('labels') or []))}"))


def _decision_panel(d: Decision) -> Any:
    """One oversight decision: what was proposed, who decided what, why, and what ran instead."""
    from rich.panel import Panel

    lines = [f"[bold]{d.verb}[/bold] by {_clip(d.by, 200)}" + (f": {_clip(d.reason, 600)}" if d.reason else ""),
             f"[bold]proposed[/bold] {_clip(d.proposed)}"]
    if d.kind == "handover" and d.agent:
        lines.append(f"[bold]handed to[/bold] {_clip(str(d.agent), 200)}")
    if d.executed is not None and d.executed != d.proposed:
        lines.append(f"[bold]ran instead[/bold] {_clip(d.executed)}")
    elif d.executed is None:
        lines.append("nothing ran: the episode stopped here")
    if d.record:
        lines.append(f"record {_clip(json.dumps(d.record, ensure_ascii=False), 600)}")
    return Panel("\n".join(lines), title=f"oversight at step {d.step}", border_style="red" if d.kind == "stop" else "yellow")


def _clip(text: str, limit: int = 800) -> str:
    """Text of a log as a panel shows it: cut, inert (an escape sequence a model or a page wrote is
    shown as its escape, never run by the terminal) and without rich markup."""
    from rich.markup import escape

    text = text if len(text) <= limit else text[:limit] + f" ... ({len(text)} chars)"
    return escape(printable(text, lines=True))


def cmd_branch(args: argparse.Namespace) -> int:
    from agentbed.branch import PrefixMismatch, branch_from_log
    from agentbed.control import chain
    from agentbed.factories import build_controllers, controllers_of
    from agentbed.replay import episode_of
    from agentbed.runner import EpisodeSpec

    path = Path(args.log)
    if args.at < 0:
        raise UsageError(f"--at must be at least 0, not {args.at}")
    out = Path(args.out) if args.out else path.parent / "branches"
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    header = read_log(path)[0]
    suite, base_spec, _ = episode_of(header, path)
    names = [n for n in args.agents.split(",") if n]
    for name in names:
        if name != "continue" and not suite.has_agent(name):
            raise UsageError(f"--agents: suite {suite.name!r} has no agent {name!r}")
    if args.rollouts < 1:
        raise UsageError("--rollouts must be at least 1")
    options = base_spec.options
    controllers = controllers_of(args)
    base = suite.make_agent(base_spec, suite.make_env(header["task"], options)) if "continue" in names else None

    def factory(name: str):  # noqa: ANN202
        return lambda env: suite.make_agent(EpisodeSpec(suite.name, header["task"], name, header["seed"], options), env)

    candidates = {n: factory(n) for n in names}
    try:
        records = branch_from_log(path, lambda: suite.make_env(header["task"], options), args.at, candidates,
                                  rollouts=args.rollouts, out_dir=out, budget=suite.budget, method=args.method,
                                  suite=suite.name, base_agent=base, controllers=controllers,
                                  oversee=lambda spec, env: chain(*build_controllers(controllers, suite.setup(spec, env))))
    except PrefixMismatch as exc:
        if getattr(args, "json", False):
            emit("branch", {"log": str(path), "at": args.at, "prefix_reproduced": False, "problem": str(exc),
                            "branches": []})
        else:
            print(f"prefix not reproduced: {exc}")
        return 1
    except ValueError as exc:
        raise UsageError(f"--at: {exc}") from None
    if getattr(args, "json", False):
        emit("branch", {"log": str(path), "at": args.at, "prefix_reproduced": True, "out": str(out), "branches": [
            {"agent": r.agent, "episode_id": r.episode_id, "log": r.log, "success": r.success,
             "scores": outcome_scores(r.metrics), "steps": r.steps, "total_reward": r.total_reward, "status": r.status}
            for r in records]})
        return 0
    for r in records:
        scores = "".join(f"  {k}={v!s:5}" for k, v in outcome_scores(r.metrics).items())
        print(f"{r.agent:>24}  success={r.success!s:5}{scores}  steps={r.steps:3}  return={r.total_reward:g}"
              f"  status={r.status}")
    print(f"{len(records)} branches written to {out}")
    return 0


__all__ = ["register", "LogFormatError"]
