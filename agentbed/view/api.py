"""The viewer's JSON documents, built from :mod:`agentbed.view.catalog`'s read-only state.

Each function takes what the catalog read and returns plain JSON-ready data; the server only
routes and encodes. The plots are the report's own (:mod:`agentbed.report.plots`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from agentbed.decisions import decisions
from agentbed.files import resolved
from agentbed.log import decode_action, first_system_prompt, system_prompt_of
from agentbed.report.findings import findings_forest
from agentbed.report.plots import success_heatmap
from agentbed.scores import outcome_scores
from agentbed.seal import KEY_VAR
from agentbed.seal_verdict import SealStatus
from agentbed.validate import open_regular
from agentbed.view.catalog import RUNNING, Catalog, RunView
from agentbed.view.episode_log import read_episode
from agentbed.view.summaries import workload_document
from agentbed.view.tally import RowTally

PAGE = 200  # episode rows per page: the table stays fast however large the run


def seal_text(seal: SealStatus) -> str:
    """The runs list's seal column: ``agentbed verify``'s verdict, with its first problem named."""
    more = f" (and {len(seal.problems) - 1} more)" if len(seal.problems) > 1 else ""
    first = seal.problems[0] if seal.problems else ""
    if seal.state == "verified" and seal.signature == "not checked":
        return f"sealed, hash chains verified; signature NOT checked: no key was given ({KEY_VAR} unset)"
    if seal.state == "verified":
        return "sealed, verified" + (", HMAC checked" if seal.signature == "checked" else "")
    if seal.state == "incomplete":  # running, or stopped owing episodes: `agentbed run --resume` finishes it
        return f"sealing (incomplete): {first}{more}"
    if seal.state in ("failed", "malformed"):
        return f"seal FAILED: {first}{more}"
    return seal.headline


def _planned(meta: dict[str, Any] | None) -> int | None:
    if not meta:
        return None
    return len(meta["tasks"]) * len(meta["agents"]) * len(meta["seeds"])


def run_summary(view: RunView, state: dict[str, Any]) -> dict[str, Any]:
    """One line of the runs list, from :meth:`RunView.listing` (or :meth:`RunView.refresh`: its rows tallied)."""
    meta = state["meta"]
    tally: RowTally = state["tally"] if "tally" in state else RowTally.of(state["rows"])
    seal = view.seal()  # the same verification as `agentbed verify`, never a second reading of the seal
    counts = tally.counts
    suites = [meta["suite"]] if meta else sorted(tally.suites | set(state["summaries"]))
    agents = list(meta["agents"]) if meta else sorted(tally.agents)
    finished = sum(n for status, n in counts.items() if status != RUNNING)
    return {"id": view.rel, "path": str(view.root), "suite": ", ".join(suites), "agents": agents,
            "episodes": tally.rows, "finished": finished, "planned": _planned(meta), "counts": dict(counts),
            "errors": tally.errors, "successes": tally.successes,
            "cost": tally.cost if tally.costed else None, "seal": seal_text(seal), "seal_state": seal.state,
            "seal_problems": seal.problems[:20],
            "live": counts.get(RUNNING, 0) > 0 or (state["manifest"] is not None
                                                   and not state["manifest"].get("final")),
            "problems": len(state["problems"]), "command": (meta or {}).get("command", "")}


def runs_document(catalog: Catalog) -> dict[str, Any]:
    runs = []
    for view in catalog.runs().values():
        runs.append(run_summary(view, view.listing()))
    runs.sort(key=lambda r: r["id"])
    return {"root": str(catalog.root), "runs": runs}


def run_document(view: RunView) -> dict[str, Any]:
    state = view.refresh()
    rows = state["rows"]
    forest, other = findings_forest(state["summaries"])
    facets = {key: sorted({str(r[key]) for r in rows}) for key in ("agent", "task", "status")}
    facets["label"] = sorted({label for r in rows for label in r["labels"]})
    return {"run": run_summary(view, state), "meta": state["meta"], "problems": state["problems"],
            "forest": forest, "findings_text": other, "heatmap": success_heatmap(rows, running=RUNNING), "facets": facets,
            "summaries": {s: {"title": v.get("title", s), "headline": v.get("headline", []),
                              "error": v.get("error")} for s, v in state["summaries"].items()},
            "workloads": {s: workload_document(v) for s, v in state["summaries"].items()}}


def _matches(row: dict[str, Any], filters: dict[str, str]) -> bool:
    for key in ("agent", "task", "status"):
        if filters.get(key) and str(row[key]) != filters[key]:
            return False
    if filters.get("label") and filters["label"] not in row["labels"]:
        return False
    if filters.get("success") in ("true", "false") and row["success"] != (filters["success"] == "true"):
        return False
    query = (filters.get("q") or "").lower()
    return not query or query in (row["id"] + " " + row["error"] + " " + " ".join(row["labels"])).lower()


def episodes_document(view: RunView, filters: dict[str, str]) -> dict[str, Any]:
    rows = view.refresh()["rows"]
    matched = [r for r in rows if _matches(r, filters)]
    matched.sort(key=lambda r: (r["status"] != RUNNING, r["agent"], r["task"], r["seed"] or 0))
    try:
        offset = max(0, int(filters.get("offset") or 0))
    except ValueError:
        offset = 0
    return {"total": len(rows), "matched": len(matched), "offset": offset, "rows": matched[offset:offset + PAGE]}


def _text(value: Any) -> str:
    if isinstance(value, str | dict) and not (isinstance(value, dict) and "base64" not in value):
        decoded = decode_action(value)
        return decoded if isinstance(decoded, str) else repr(decoded)
    return json.dumps(value, ensure_ascii=False)


def _tool_call(action: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(action)
    except (ValueError, TypeError):
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("tool"), str):
        return {"tool": parsed["tool"], "arguments": parsed.get("arguments")}
    return None


def _messages(model_output: Any) -> list[dict[str, Any]]:
    """The model's reply (and the prompt it saw, where recorded) as role/content pairs."""
    if not isinstance(model_output, dict):
        return []
    out: list[dict[str, Any]] = []
    for key in ("prompt", "messages"):
        for m in model_output.get(key) or []:
            if isinstance(m, dict):
                out.append({"role": str(m.get("role") or m.get("type") or "?"), "content": _text(m.get("content"))})
    message = model_output.get("message")
    if isinstance(message, dict):
        data = message.get("data")
        body = data if isinstance(data, dict) else message  # LangChain's dumpd form
        calls = [{"name": c.get("name"), "args": c.get("args")} for c in body.get("tool_calls") or []
                 if isinstance(c, dict)]
        out.append({"role": "assistant", "content": _text(body.get("content") or ""), "tool_calls": calls})
    return out


def transcript(records: list[dict[str, Any]], prices: Any) -> dict[str, Any]:
    """Header, steps (with the controller's decision on each) and footer, ready to show."""
    from agentbed.cost import episode_cost

    header = records[0] if records and records[0].get("type") == "header" else {}
    steps, controls = [], []
    footer = None
    for r in records[1:]:
        if r["type"] == "step":
            action = _text(r["action"])
            usage = r.get("usage") or None
            cost = episode_cost({**usage, "model": (header.get("agent") or {}).get("model")}, prices) \
                if usage and usage.get("total_tokens") is not None else None
            steps.append({"i": r["i"], "agent": r.get("agent"), "action": action, "tool_call": _tool_call(action),
                          "observation": r["observation"], "reward": r["reward"], "clock": r["clock"],
                          "terminated": r["terminated"], "truncated": r["truncated"], "usage": usage,
                          "cost": cost, "risk": r.get("risk"), "control": r.get("control"),
                          "messages": _messages(r.get("model_output")), "info": r.get("info"),
                          "system_prompt": system_prompt_of(r),
                          "meta": r.get("meta")})
        elif r["type"] == "control":
            controls.append({"i": r["i"], "proposed": _text(r["proposed"]), "verdict": r.get("verdict"),
                             "clock": r["clock"]})
        elif r["type"] == "footer":
            footer = {k: r.get(k) for k in ("status", "stop_reason", "success", "total_reward", "steps",
                                             "virtual_seconds", "tokens", "metrics", "labels", "error")}
    system = first_system_prompt(records) or (header.get("agent") or {}).get("system_prompt") \
        or (header.get("task_params") or {}).get("prompt")
    return {"header": {k: header.get(k) for k in ("episode_id", "suite", "task", "agent_id", "agent", "seed",
                                                  "options", "budget", "parent", "tools", "observation",
                                                  "clock", "task_params")},
            "system_prompt": system, "steps": steps, "controls": controls, "footer": footer,
            "decisions": [d.to_dict() for d in decisions(records)]}


def log_in_run(view: RunView, row: dict[str, Any]) -> Path | None:
    """The log a row names, when it lies inside the run directory (links resolved); else None.
    Every route that reads or re-executes a log goes through it."""
    path = resolved(view.root / row["log"])
    return path if path.is_relative_to(view.root.resolve()) else None


OUTSIDE = "the index names a log outside the run directory"


def episode_document(view: RunView, episode_id: str) -> dict[str, Any] | None:
    state = view.refresh()
    row = next((r for r in state["rows"] if r["id"] == episode_id), None)
    if row is None:
        return None
    path = log_in_run(view, row)
    if path is None:
        return {"row": row, "check": OUTSIDE, "problems": [], "transcript": None}
    digest = next((r.get("digest") for r in view.index.records if r["episode_id"] == episode_id), None)
    log = read_episode(path, digest or None, view.root)
    doc = transcript(log.records, view.prices) if log.records else None
    parent = (doc or {}).get("header", {}).get("parent")
    return {"row": row, "check": log.check, "problems": log.problems, "transcript": doc, "parent": parent,
            "tree": branch_tree(view, row) if doc else None}


def replay_document(view: RunView, episode_id: str) -> dict[str, Any]:
    """Re-execute an episode in memory (nothing is written) and show its first divergence from
    the log, with the recorded and replayed record for a side-by-side diff."""
    from agentbed.replay import first_divergence, rerun

    row = next((r for r in view.refresh()["rows"] if r["id"] == episode_id), None)
    if row is None or row["status"] == RUNNING:
        return {"error": "no finished episode of that id"}
    path = log_in_run(view, row)
    if path is None:
        return {"error": OUTSIDE}
    try:
        with open_regular(path, what="trajectory log", inside=view.root):  # not a FIFO, not a device
            pass
        recorded, replayed = rerun(path)
    except Exception as exc:  # noqa: BLE001 - shown in the page: a suite missing here, a bad log
        return {"error": f"cannot replay: {type(exc).__name__}: {exc}"}
    divergence = first_divergence(recorded, replayed)
    if divergence is None:
        return {"identical": True, "records": len(recorded)}
    comparable = [[r for r in rs if r.get("type") != "control"] for rs in (recorded, replayed)]
    at = divergence.record - 1
    pick = [rs[at] if at < len(rs) else None for rs in comparable]
    return {"identical": False, "message": divergence.message(), "field": divergence.field,
            "recorded": pick[0], "replayed": pick[1]}


def branch_tree(view: RunView, row: dict[str, Any]) -> dict[str, Any]:
    """The oversight tree around an episode: the branches ``agentbed branch`` wrote from it (in
    ``branches/`` beside its log, each header's ``parent`` naming it and the step it kept),
    grouped by checkpoint, each with its intervention (agent) and outcome."""
    log = view.root / row["log"]
    checkpoints: dict[int, list[dict[str, Any]]] = defaultdict(list)
    folder = log.parent / "branches"
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        branch = read_episode(path, inside=view.root)
        if not branch.records:
            continue
        parent = branch.records[0].get("parent") or {}
        if parent.get("episode_id") != row["id"]:
            continue
        footer = branch.records[-1] if branch.records[-1]["type"] == "footer" else {}
        checkpoints[int(parent.get("at_step") or 0)].append({
            "file": str(path.relative_to(view.root)), "agent": branch.records[0].get("agent_id"),
            "status": footer.get("status", RUNNING), "success": footer.get("success"),
            "scores": outcome_scores(footer.get("metrics")),
            "reward": footer.get("total_reward"), "steps": footer.get("steps"), "check": branch.check})
    return {"checkpoints": [{"at_step": k, "branches": v} for k, v in sorted(checkpoints.items())]}
