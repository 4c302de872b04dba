"""Export a run directory as Inspect AI eval logs, one per (suite, agent), for ``inspect view``.

Each log is its own task in Inspect's eyes (one ``task_id`` per suite, agent and run), so ``inspect
view`` lists every agent of a run. A task of the suite is a sample and its seeds are the sample's
epochs (epoch k is the k-th smallest seed of that task; the seed itself is in the metadata). A
sample carries the episode's conversation and its transcript events (model calls with their usage,
tool calls, controller verdicts as approvals, errors, the outcome's score), rebuilt from the
trajectory log by :mod:`agentbed.export.inspect_transcript`. Scores come from the footer:
``success`` (1/0, with status, labels and metrics attached) and ``labels``. The logs are built from
Inspect's own types and written with its ``write_eval_log``, so ``inspect view`` reads what Inspect
wrote.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import agentbed
from agentbed.errors import UsageError
from agentbed.export.episodes import EpisodeLog, load_episodes
from agentbed.problems import is_errored
from agentbed.stats import bootstrap_ci

try:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
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
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    from agentbed.export.inspect_transcript import Transcript, eval_error, stable_id, transcript, usage_of
except ImportError:  # pragma: no cover - the [inspect] extra is not installed
    _MISSING = "the Inspect export needs inspect-ai: pip install -e '.[inspect]'"
else:
    _MISSING = ""

_FILE_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def export_inspect(run_dir: str | Path, out_dir: str | Path, malformed: list[str] | None = None,
                   episodes: list[EpisodeLog] | None = None) -> list[Path]:
    """Write one ``<suite>-<agent>.eval`` file per suite and agent under ``out_dir``; return the paths.
    Logs that exist but cannot be read become sample errors and, given ``malformed``, are listed there.
    ``episodes``: the run's, as :func:`load_episodes` read them (read here when not given)."""
    if _MISSING:
        raise UsageError(_MISSING)
    root = Path(run_dir)
    episodes = load_episodes(root) if episodes is None else episodes
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
            stem += "-" + stable_id(suite, agent)[:8]
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
    epochs = sample_epochs(episodes)
    samples = [eval_sample(ep, model, sample_id, epoch, created)
               for ep, (sample_id, epoch) in zip(episodes, epochs, strict=True)]
    usage = _sum_usage([s.model_usage.get(model) for s in samples])
    run_id = stable_id(json.dumps(run_info, sort_keys=True, default=str), created)
    sample_ids = list(dict.fromkeys(s.id for s in samples))
    spec = EvalSpec(
        eval_id=stable_id(run_id, suite, agent), run_id=run_id, created=created, task=suite,
        task_display_name=f"{suite} ({agent})", task_id=stable_id(run_id, suite, agent), task_version=0,
        task_args=episodes[0].record.get("options") or {},
        dataset=EvalDataset(name=suite, samples=len(sample_ids), sample_ids=sample_ids),
        model=model, config=EvalConfig(epochs=max((e for _, e in epochs), default=1)),
        packages={"agentbed": agentbed.__version__},
        solver=f"agentbed/{agent}", metadata={"agentbed_run": run_info, "agent": agent})
    everything_errored = bool(samples) and all(s.error is not None for s in samples)
    return EvalLog(
        status="error" if everything_errored else "success", eval=spec,
        error=samples[0].error if everything_errored else None,
        plan=EvalPlan(name="agentbed", steps=[EvalPlanStep(solver=f"agentbed/{agent}")]),
        results=_results(episodes, samples),
        stats=EvalStats(started_at=created, completed_at=created, model_usage={model: usage} if usage else {}),
        samples=samples)


def sample_epochs(episodes: list[EpisodeLog]) -> list[tuple[str, int]]:
    """``(sample id, epoch)`` for each episode: the task is the sample and its seeds, in increasing
    order, its epochs 1, 2, ... An episode that repeats a (task, seed) already seen (logs merged from
    two runs) becomes a sample of its own, ``task#2``, so no (sample, epoch) pair is written twice."""
    seeds: dict[str, list[Any]] = defaultdict(list)
    for ep in episodes:
        seeds[str(ep.record.get("task"))].append(ep.record.get("seed"))
    rank = {task: {seed: n for n, seed in enumerate(sorted(set(map(str, given)), key=_numeric_first), start=1)}
            for task, given in seeds.items()}
    seen: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for ep in episodes:
        task, seed = str(ep.record.get("task")), str(ep.record.get("seed"))
        seen[(task, seed)] += 1
        repeat = seen[(task, seed)]
        out.append((task if repeat == 1 else f"{task}#{repeat}", rank[task][seed]))
    return out


def _numeric_first(seed: str) -> tuple[int, int, str]:
    return (0, int(seed), "") if seed.lstrip("-").isdigit() else (1, 0, seed)


def _results(episodes: list[EpisodeLog], samples: list[EvalSample]) -> EvalResults:
    """Accuracy with Inspect's stderr, plus agentbed's 95% bootstrap interval (clustered by task),
    over the scored samples: an errored one (its ``error`` set) is not scored, as in Inspect."""
    scored = [ep for ep, s in zip(episodes, samples, strict=True) if s.error is None]
    n = len(samples)
    if not scored:
        return EvalResults(total_samples=n, completed_samples=0, scores=[])
    values = [1.0 if ep.record.get("success") else 0.0 for ep in scored]
    ci = bootstrap_ci(values, groups=[str(ep.record.get("task")) for ep in scored])
    k = len(values)
    mean = sum(values) / k
    stderr = (sum((v - mean) ** 2 for v in values) / (k - 1) / k) ** 0.5 if k > 1 else 0.0
    metrics = {name: EvalMetric(name=name, value=value) for name, value in
               (("accuracy", mean), ("stderr", stderr), ("ci95_low", ci.low), ("ci95_high", ci.high))}
    return EvalResults(total_samples=n, completed_samples=k,
                       scores=[EvalScore(name="success", scorer="agentbed_outcome", scored_samples=k,
                                         unscored_samples=n - k, metrics=metrics)])


def _sum_usage(parts: list[ModelUsage | None]) -> ModelUsage | None:
    present = [p for p in parts if p is not None]
    if not present:
        return None
    return ModelUsage(input_tokens=sum(p.input_tokens for p in present),
                      output_tokens=sum(p.output_tokens for p in present),
                      total_tokens=sum(p.total_tokens for p in present))


def eval_sample(ep: EpisodeLog, model: str, sample_id: str, epoch: int, created: str) -> EvalSample:
    record, footer = ep.record, ep.footer
    # Inspect draws random ids and times; the transcript derives them from the episode, so re-exports are identical
    told = transcript(ep.log, model, record["episode_id"], created) if ep.log else Transcript()
    messages = told.messages or [ChatMessageUser(content="")]
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
    error = None  # an errored episode (agentbed.problems.is_errored) is not scored: an error, no score
    if is_errored(record) or ep.log_error:
        error = eval_error(str(record.get("error") or footer.get("error") or ep.log_error))
        scores = {}
    usage = _sum_usage([usage_of(r) for r in ep.log if r.get("type") == "step"])
    metadata = {k: record.get(k) for k in ("episode_id", "suite", "task", "agent", "seed", "status", "steps",
                                           "virtual_seconds", "tokens", "digest", "options")}
    metadata["log"] = record.get("log") or (ep.log_path.name if ep.log_path else "")
    metadata["task_params"] = ep.header.get("task_params", {})
    metadata["tools"] = [t.get("name") for t in ep.header.get("tools", []) if isinstance(t, dict)]
    if status == "error" and error is None:  # raised inside the agent or the world: a failed attempt, scored
        metadata["error"] = str(record.get("error") or footer.get("error") or "")
    given = next((m for m in messages if isinstance(m, ChatMessageUser)), messages[0])
    return EvalSample(
        id=sample_id, epoch=epoch, input=given.text, target="", messages=messages, events=told.events,
        output=ModelOutput.from_message(last) if last is not None else ModelOutput(model=model),
        scores=scores, metadata=metadata, model_usage={model: usage} if usage else {}, error=error,
        total_time=record.get("wall_seconds"), working_time=record.get("wall_seconds"))
