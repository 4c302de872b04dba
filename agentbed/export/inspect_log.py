"""Export a run directory as Inspect AI eval logs, one per (suite, agent), for ``inspect view``.

Each episode becomes a sample. Its conversation is rebuilt from the trajectory log: the first
observation is the user's message, each action an assistant message with one tool call (the
raw action text when it is not a tool call), each observation the tool's reply (or a user
message after an action that named no tool). Scores come from the footer: ``success`` (1/0,
with status, labels and metrics attached) and ``labels``. Token usage is summed from the
steps that recorded it. The logs are built from Inspect's own types and written with its
``write_eval_log``, so any version of ``inspect view`` that reads them sees what Inspect wrote.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import agentbed
from agentbed.errors import UsageError
from agentbed.export.episodes import EpisodeLog, load_episodes
from agentbed.log import decode_action
from agentbed.stats import bootstrap_ci

try:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalError,
        EvalLog,
        EvalMetric,
        EvalPlan,
        EvalPlanStep,
        EvalResults,
        EvalSample,
        EvalScore,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageAssistant,
        ChatMessageTool,
        ChatMessageUser,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall, ToolCallError
except ImportError:  # pragma: no cover - the [inspect] extra is not installed
    _MISSING = "the Inspect export needs inspect-ai: pip install -e '.[inspect]'"
else:
    _MISSING = ""

_FILE_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def export_inspect(run_dir: str | Path, out_dir: str | Path, malformed: list[str] | None = None) -> list[Path]:
    """Write one ``<suite>-<agent>.eval`` file per suite and agent under ``out_dir``; return the paths.
    Logs that exist but cannot be read become sample errors and, given ``malformed``, are listed there."""
    if _MISSING:
        raise UsageError(_MISSING)
    root = Path(run_dir)
    episodes = load_episodes(root)
    if malformed is not None:
        malformed.extend(ep.log_error for ep in episodes if ep.log_error and ep.log_path is not None
                         and not ep.log_path.name.endswith(".team.json"))  # a team's unit is no trajectory
    groups: dict[tuple[str, str], list[EpisodeLog]] = defaultdict(list)
    for ep in episodes:
        groups[(str(ep.record.get("suite", "")), str(ep.record.get("agent", "")))].append(ep)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run_info = _run_info(root)
    created = _created(root)
    paths: list[Path] = []
    used: set[str] = set()
    for (suite, agent), group in sorted(groups.items()):
        group.sort(key=lambda ep: (str(ep.record.get("task")), _seed_key(ep.record.get("seed")),
                                   ep.record["episode_id"]))
        stem = f"{_FILE_UNSAFE.sub('_', suite)}-{_FILE_UNSAFE.sub('_', agent)}"
        if stem in used:  # e.g. suite "a-b" + agent "c" and suite "a" + agent "b-c"
            stem += "-" + _stable_id(suite, agent)[:8]
        used.add(stem)
        path = out / f"{stem}.eval"
        write_eval_log(eval_log(suite, agent, group, run_info, created), str(path))
        paths.append(path)
    return paths


def _seed_key(seed: Any) -> tuple[int, str]:
    return (seed, "") if isinstance(seed, int) else (0, str(seed))


def _run_info(root: Path) -> dict[str, Any]:
    try:
        info = json.loads((root / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _created(root: Path) -> str:
    """When the run was recorded (run.json's mtime), so a re-export of the same run is identical."""
    source = root / "run.json" if (root / "run.json").exists() else root
    return datetime.fromtimestamp(source.stat().st_mtime, UTC).isoformat(timespec="seconds")


def _stable_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:22]


def inspect_model_name(agent: dict[str, Any] | None, fallback: str) -> str:
    """Inspect names models ``provider/model``; agentbed says ``provider:model``; scripted agents
    have no model and are named ``agentbed/<agent>``."""
    model = (agent or {}).get("model")
    if isinstance(model, str) and model:
        return model.replace(":", "/", 1) if ":" in model else model
    return f"agentbed/{fallback}"


def eval_log(suite: str, agent: str, episodes: list[EpisodeLog], run_info: dict[str, Any], created: str) -> EvalLog:
    model = next((inspect_model_name(ep.header.get("agent"), agent) for ep in episodes if ep.header),
                 f"agentbed/{agent}")
    samples = [eval_sample(ep, model) for ep in episodes]
    usage = _sum_usage([s.model_usage.get(model) for s in samples])
    run_id = _stable_id(json.dumps(run_info, sort_keys=True, default=str), created)
    spec = EvalSpec(
        eval_id=_stable_id(run_id, suite, agent), run_id=run_id, created=created, task=suite,
        task_id=_stable_id(suite), task_version=0, task_args=episodes[0].record.get("options") or {},
        dataset=EvalDataset(name=suite, samples=len(samples), sample_ids=[s.id for s in samples]),
        model=model, config=EvalConfig(epochs=1), packages={"agentbed": agentbed.__version__},
        solver=f"agentbed/{agent}", metadata={"agentbed_run": run_info, "agent": agent})
    return EvalLog(
        status="success", eval=spec,
        plan=EvalPlan(name="agentbed", steps=[EvalPlanStep(solver=f"agentbed/{agent}")]),
        results=_results(episodes, samples),
        stats=EvalStats(started_at=created, completed_at=created, model_usage={model: usage} if usage else {}),
        samples=samples)


def _results(episodes: list[EpisodeLog], samples: list[EvalSample]) -> EvalResults:
    """Accuracy with Inspect's stderr, plus agentbed's 95% bootstrap interval (clustered by task)."""
    values = [1.0 if ep.record.get("success") else 0.0 for ep in episodes]
    ci = bootstrap_ci(values, groups=[str(ep.record.get("task")) for ep in episodes])
    n = len(values)
    mean = sum(values) / n
    stderr = (sum((v - mean) ** 2 for v in values) / (n - 1) / n) ** 0.5 if n > 1 else 0.0
    metrics = {name: EvalMetric(name=name, value=value) for name, value in
               (("accuracy", mean), ("stderr", stderr), ("ci95_low", ci.low), ("ci95_high", ci.high))}
    errors = sum(1 for s in samples if s.error is not None)
    return EvalResults(total_samples=n, completed_samples=n - errors,
                       scores=[EvalScore(name="success", scorer="agentbed_outcome", scored_samples=n,
                                         metrics=metrics)])


def _sum_usage(parts: list[ModelUsage | None]) -> ModelUsage | None:
    present = [p for p in parts if p is not None]
    if not present:
        return None
    return ModelUsage(input_tokens=sum(p.input_tokens for p in present),
                      output_tokens=sum(p.output_tokens for p in present),
                      total_tokens=sum(p.total_tokens for p in present))


def _parse_call(action: str | bytes) -> tuple[str, dict[str, Any]] | None:
    """``(tool, arguments)`` when the action is a well-formed tool call, else None."""
    if isinstance(action, bytes):
        return None
    try:
        obj = json.loads(action)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("tool"), str) and isinstance(obj.get("arguments", {}), dict):
        return obj["tool"], obj.get("arguments", {})
    return None


def _action_text(action: str | bytes) -> str:
    return action if isinstance(action, str) else action.decode("utf-8", "backslashreplace")


def _model_text(model_output: Any) -> str:
    """The model's own text in a recorded reply (LangChain's message_to_dict form), if any."""
    if not isinstance(model_output, dict):
        return ""
    message = model_output.get("message")
    data = message.get("data", message) if isinstance(message, dict) else {}
    content = data.get("content") if isinstance(data, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    return ""


def _model_call_id(model_output: Any) -> str | None:
    message = model_output.get("message") if isinstance(model_output, dict) else None
    data = message.get("data", message) if isinstance(message, dict) else {}
    calls = data.get("tool_calls") if isinstance(data, dict) else None
    if isinstance(calls, list) and calls and isinstance(calls[0], dict) and isinstance(calls[0].get("id"), str):
        return calls[0]["id"]
    return None


def conversation(log: list[dict[str, Any]], model: str) -> list[ChatMessage]:
    """The episode as chat messages, in order, one exchange per step."""
    header = log[0] if log and log[0].get("type") == "header" else {}
    messages: list[ChatMessage] = [ChatMessageUser(content=str(header.get("observation", "")), source="input")]
    for record in log[1:]:
        kind = record.get("type")
        if kind not in {"step", "control"}:
            continue
        action = decode_action(record["action"] if kind == "step" else record["proposed"])
        call = _parse_call(action)
        meta = {k: record[k] for k in ("i", "clock", "risk", "reward", "agent") if record.get(k) is not None}
        if record.get("control") or kind == "control":
            meta["control"] = record.get("control") or record.get("verdict")
        if kind == "control":
            meta["executed"] = False
        text = _model_text(record.get("model_output"))
        call_id = _model_call_id(record.get("model_output")) or f"step-{record.get('i', len(messages))}"
        if call is None:
            messages.append(ChatMessageAssistant(content=text or _action_text(action), model=model, metadata=meta))
            if kind == "step":
                messages.append(ChatMessageUser(content=str(record.get("observation", ""))))
            continue
        name, arguments = call
        messages.append(ChatMessageAssistant(content=text, model=model, metadata=meta,
                                             tool_calls=[ToolCall(id=call_id, function=name, arguments=arguments)]))
        if kind == "step":
            info = record.get("info") if isinstance(record.get("info"), dict) else {}
            observation = str(record.get("observation", ""))
            error = ToolCallError("parsing", observation) if info.get("action_error") else None
            messages.append(ChatMessageTool(content=observation, tool_call_id=call_id, function=name, error=error))
    return messages


def _usage(log: list[dict[str, Any]]) -> ModelUsage | None:
    steps = [r["usage"] for r in log if r.get("type") == "step" and isinstance(r.get("usage"), dict)]
    if not steps:
        return None
    return ModelUsage(input_tokens=sum(int(u.get("input_tokens", 0)) for u in steps),
                      output_tokens=sum(int(u.get("output_tokens", 0)) for u in steps),
                      total_tokens=sum(int(u.get("total_tokens", 0)) for u in steps))


def eval_sample(ep: EpisodeLog, model: str) -> EvalSample:
    record, footer = ep.record, ep.footer
    messages = conversation(ep.log, model) if ep.log else [ChatMessageUser(content="")]
    for n, message in enumerate(messages):  # Inspect draws random ids; fixed ones keep re-exports identical
        message.id = _stable_id(record["episode_id"], str(n))
    labels = [str(x) for x in record.get("labels") or []]
    status = str(record.get("status", footer.get("status", "")))
    last = next((m for m in reversed(messages) if isinstance(m, ChatMessageAssistant)), None)
    answer = ""
    if last is not None:
        answer = last.text or (json.dumps({"tool": last.tool_calls[0].function,
                                           "arguments": last.tool_calls[0].arguments}) if last.tool_calls else "")
    outcome = {"status": status, "stop_reason": footer.get("stop_reason", ""), "labels": labels,
               "metrics": record.get("metrics") or {}, "total_reward": record.get("total_reward")}
    scores = {
        "success": Score(value=1.0 if record.get("success") else 0.0, answer=answer,
                         explanation=f"status {status}" + (f" ({outcome['stop_reason']})" if outcome["stop_reason"]
                                                           else "") + (f"; labels: {', '.join(labels)}" if labels
                                                                       else ""),
                         metadata=outcome),
        "labels": Score(value=" ".join(labels) if labels else "none", metadata={"labels": labels}),
    }
    error = None
    if status == "error" or ep.log_error:
        detail = str(record.get("error") or footer.get("error") or ep.log_error)
        last_line = next((x for x in reversed(detail.strip().splitlines()) if x.strip()), detail)
        error = EvalError(message=last_line.strip(), traceback=detail, traceback_ansi=detail)
    usage = _usage(ep.log)
    metadata = {k: record.get(k) for k in ("episode_id", "suite", "task", "agent", "seed", "status", "steps",
                                           "virtual_seconds", "tokens", "digest", "options")}
    metadata["log"] = record.get("log") or (ep.log_path.name if ep.log_path else "")
    metadata["task_params"] = ep.header.get("task_params", {})
    metadata["tools"] = [t.get("name") for t in ep.header.get("tools", []) if isinstance(t, dict)]
    return EvalSample(
        id=record["episode_id"], epoch=1, input=messages[0].text, target="", messages=messages,
        output=ModelOutput.from_message(last) if last is not None else ModelOutput(model=model),
        scores=scores, metadata=metadata, model_usage={model: usage} if usage else {}, error=error,
        total_time=record.get("wall_seconds"), working_time=record.get("wall_seconds"))
