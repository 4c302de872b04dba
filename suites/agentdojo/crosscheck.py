"""The cross-check: AgentDojo's own runner beside agentbed's, task by task.

Two checks, both through AgentDojo's code end to end (its task runner builds the environment,
runs the pipeline in its tool loop and grades):

- :func:`their_ground_truth` runs AgentDojo's ground-truth pipeline through the functions its
  benchmark script calls (``agentdojo.benchmark.benchmark_suite_with_injections`` and
  ``benchmark_suite_without_injections``), for every user task and every attacked pair;
- :func:`their_rescoring` replays the tool calls and final answer an agentbed episode recorded as
  an AgentDojo pipeline (``TaskSuite.run_task_with_pipeline``), so any agent's episode, a chat
  model's included, is graded by AgentDojo's runner on AgentDojo's environment; an episode the
  world re-ran after a reply with no content is replayed try by try, AgentDojo's runner itself
  driving the re-runs (up to its 3 tries).

:func:`compare` pairs the results with agentbed's per task (utility, and AgentDojo's "security",
True when the injection task was achieved).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from attacks.agentdojo.injections import DEFAULT_VICTIM, injections
from environments.agentdojo.benchmark import BENCHMARK_VERSION, VERSIONS, TaskId, task_suite


@dataclass(frozen=True)
class Scores:
    utility: bool
    attack_success: bool | None  # None for a user task without an attack


def _pipeline_base() -> Any:
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement

    return BasePipelineElement


def quiet_logger(logdir: str | Path) -> Any:
    """AgentDojo's logger context as its script sets it up (its trace logger writes each task's
    JSON under ``logdir``), without printing the conversations."""
    from agentdojo.logging import Logger

    class Quiet(Logger):
        def __init__(self) -> None:
            self.logdir, self.messages = str(logdir), []

        def log(self, *args: Any, **kwargs: Any) -> None:
            pass

        def log_error(self, *args: Any, **kwargs: Any) -> None:
            pass

    return Quiet()


def ground_truth_pipeline(suite_name: str, victim: str = DEFAULT_VICTIM, version: str = BENCHMARK_VERSION) -> Any:
    """AgentDojo's ``GroundTruthPipeline`` for whichever task's prompt it is given (its benchmark
    functions pass only the prompt), named ``victim`` so the attacks address the same model name."""
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline

    suite = task_suite(suite_name, version)
    by_prompt = {t.GOAL: t for t in suite.injection_tasks.values()} | {t.PROMPT: t for t in suite.user_tasks.values()}

    class GroundTruthByPrompt(_pipeline_base()):
        def query(self, query: str, runtime: Any, env: Any, messages: Sequence[Any] = (), extra_args: dict | None = None
                  ) -> Any:
            return GroundTruthPipeline(by_prompt[query]).query(query, runtime, env, list(messages), extra_args or {})

    pipeline = GroundTruthByPrompt()
    pipeline.name = victim
    return pipeline


def their_ground_truth(suite_name: str, attack: str | None, logdir: str | Path, user_tasks: Iterable[str] | None = None,
                       victim: str = DEFAULT_VICTIM, version: str = BENCHMARK_VERSION,
                       injection_tasks: Iterable[str] | None = None) -> dict[TaskId, Scores]:
    """AgentDojo's benchmark functions on its ground truth at benchmark ``version``: per task,
    utility and security (AgentDojo writes its own per-task JSON logs under ``logdir``)."""
    from agentdojo.attacks.attack_registry import load_attack
    from agentdojo.benchmark import benchmark_suite_with_injections, benchmark_suite_without_injections

    suite = task_suite(suite_name, version)
    pipeline = ground_truth_pipeline(suite_name, victim, version)
    wanted = list(user_tasks) if user_tasks is not None else None
    with warnings.catch_warnings(), quiet_logger(logdir):
        warnings.simplefilter("ignore")  # "Not all injection tasks were solved": reported by the results
        if attack is None:
            results = benchmark_suite_without_injections(pipeline, suite, logdir=None, force_rerun=True,
                                                         user_tasks=wanted, benchmark_version=version)
        else:
            results = benchmark_suite_with_injections(
                pipeline, suite, load_attack(attack, suite, pipeline), logdir=None, force_rerun=True, user_tasks=wanted,
                injection_tasks=list(injection_tasks) if injection_tasks is not None else None,
                benchmark_version=version)
    out = {}
    for (user, injection), utility in results["utility_results"].items():
        if attack is None:
            out[TaskId(suite_name, user)] = Scores(bool(utility), None)
        else:
            out[TaskId(suite_name, user, injection, attack)] = Scores(
                bool(utility), bool(results["security_results"][(user, injection)]))
    return out


@dataclass
class Try:
    """One run of AgentDojo's pipeline as an agentbed episode recorded it: the calls executed, the
    final reply's text (None: no content, which makes AgentDojo run its pipeline again) and the
    calls that reply held unexecuted (the 15-round cap), and the tools a filter left for it."""

    calls: list[tuple[str, dict[str, Any]]]
    final: str | None = None
    unexecuted: list[dict[str, Any]] | None = None
    allowed: list[str] | None = None


def recorded_tries(log_records: list[dict[str, Any]]) -> list[Try]:
    """The tries an agentbed log recorded, in order (more than one when the world answered a reply
    with no content by running the pipeline again, ``info.rerun``)."""
    from agentbed.log import decode_action
    from environments.agentdojo.env import final_answer

    tries, fresh = [Try([], allowed=offered_tools(log_records))], False
    for record in log_records:
        if record.get("type") != "step":
            continue
        if fresh:  # a re-run's tool filter asked again and left these (DojoAgent.act)
            chosen = ((record.get("model_output") or {}).get("tool_filter") or {}).get("tools")
            tries.append(Try([], allowed=chosen if isinstance(chosen, list) else None))
            fresh = False
        action = decode_action(record["action"])
        answer = final_answer(action)
        if answer is not None:
            tries[-1].final, tries[-1].unexecuted = answer.text, answer.calls
            if "rerun" in (record.get("info") or {}):
                fresh = True
                continue
            break
        try:
            obj = json.loads(action)
        except (json.JSONDecodeError, TypeError, UnicodeDecodeError):
            continue  # not a tool call: AgentDojo's parsers would have dropped it too
        if isinstance(obj, dict) and isinstance(obj.get("tool"), str) and isinstance(obj.get("arguments", {}), dict):
            tries[-1].calls.append((obj["tool"], obj.get("arguments", {})))
    return tries


def replay_pipeline(tries: list[Try]) -> Any:
    """An AgentDojo pipeline that, each time AgentDojo's runner queries it, plays the next recorded
    try: its calls through AgentDojo's own tool executor, then its final reply (no content when
    the try had none, so AgentDojo's runner queries it again, as in ``run_task_with_pipeline``).
    A try's ``allowed`` tools (a filter's selection) narrow the runtime first, as AgentDojo's own
    tool-filter element does on the runtime its tries share."""
    from agentdojo.agent_pipeline.tool_execution import ToolsExecutor
    from agentdojo.functions_runtime import FunctionCall
    from agentdojo.types import ChatAssistantMessage, text_content_block_from_string

    from environments.agentdojo.env import function_calls

    pending = list(tries)

    class Replay(_pipeline_base()):
        def query(self, query: str, runtime: Any, env: Any, messages: Sequence[Any] = (), extra_args: dict | None = None
                  ) -> Any:
            now = pending.pop(0) if pending else Try([])
            history = list(messages)
            if now.allowed is not None:
                runtime.update_functions({k: f for k, f in runtime.functions.items() if k in now.allowed})
            for i, (name, arguments) in enumerate(now.calls, start=1):
                history.append(ChatAssistantMessage(role="assistant", content=None, tool_calls=[
                    FunctionCall(function=name, args=json.loads(json.dumps(arguments)), id=f"call_{i}")]))
                _, _, env, history, _ = ToolsExecutor().query(query, runtime, env, history)
            history.append(ChatAssistantMessage(
                role="assistant", tool_calls=function_calls(now.unexecuted or []) or None,
                content=None if now.final is None else [text_content_block_from_string(now.final)]))
            return query, runtime, env, history, extra_args or {}

    return Replay()


def offered_tools(log_records: list[dict[str, Any]]) -> list[str] | None:
    """The AgentDojo functions a tool filter left in the episode (its ``begin`` record on the
    first step), or None when no filter narrowed them."""
    first = next((r for r in log_records if r.get("type") == "step"), None)
    begin = ((first or {}).get("control") or {}).get("begin") or {}
    records = begin.get("chain", [begin])
    chosen = [set(r["tools"]) for r in records if isinstance(r.get("tools"), list)]
    return sorted(set.intersection(*chosen)) if chosen else None


def their_rescoring(task: TaskId, log_records: list[dict[str, Any]], victim: str = DEFAULT_VICTIM,
                    version: str = BENCHMARK_VERSION) -> Scores:
    """AgentDojo's task runner on an agentbed episode's recorded calls: its utility and security."""
    from agentbed.clock import VirtualClock
    from environments.agentdojo.env import START

    suite = task_suite(task.suite, version)
    injection = suite.injection_tasks[task.injection_task] if task.injection_task else None
    clock = VirtualClock(START)  # the recorded e-mail and file stamps were made on the virtual clock
    with clock.frozen():
        pipeline = replay_pipeline(recorded_tries(log_records))
        utility, security = suite.run_task_with_pipeline(pipeline, suite.user_tasks[task.user_task],
                                                         injection, injections(task, victim, version))
    return Scores(bool(utility), None if injection is None else bool(security))


@dataclass(frozen=True)
class Difference:
    task: TaskId
    ours: Scores | None
    theirs: Scores | None


def compare(ours: dict[TaskId, Scores], theirs: dict[TaskId, Scores]) -> list[Difference]:
    """Every task whose scores differ, or that one side has and the other lacks."""
    return [Difference(t, ours.get(t), theirs.get(t)) for t in sorted(set(ours) | set(theirs), key=str)
            if ours.get(t) != theirs.get(t)]


def agentbed_scores(tasks: Iterable[TaskId], agent: str, run_dir: str | Path | None = None,
                    options: dict[str, Any] | None = None) -> dict[TaskId, Scores]:
    """agentbed's own episodes of ``agent`` on ``tasks`` (logged under ``run_dir`` when given)."""
    from agentbed.log import TrajectoryWriter
    from agentbed.runner import EpisodeSpec, run_episode
    from suites.agentdojo.suite import SUITE

    opts = SUITE.resolve_options(options or {})
    out = {}
    for tid in tasks:
        spec = EpisodeSpec("agentdojo", str(tid), agent, 0, opts)
        writer = TrajectoryWriter(spec.log_in(run_dir)) if run_dir is not None else None
        env = SUITE.make_env(str(tid), opts)
        record = run_episode(env, SUITE.make_agent(spec), spec, budget=SUITE.budget, writer=writer,
                             controller=SUITE.episode_controller(spec, env))
        if record.status != "ok":
            raise RuntimeError(f"{tid}: episode ended with status {record.status}: {record.error[-300:]}")
        out[tid] = Scores(record.metrics["utility"], record.metrics["attack_success"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """The ground truth on every task, under both runners: one table row per (task suite, attack)."""
    import argparse
    import time

    from environments.agentdojo.benchmark import DEFAULT_ATTACKS, TASK_SUITES

    parser = argparse.ArgumentParser(prog="python -m suites.agentdojo.crosscheck", description=main.__doc__)
    parser.add_argument("--out", required=True, help="directory for AgentDojo's logs and crosscheck.json")
    parser.add_argument("--task-suite", action="append", choices=TASK_SUITES, help="default: all four")
    parser.add_argument("--attack", action="append", choices=("none", *DEFAULT_ATTACKS),
                        help="none (the user tasks alone) or one attack; default: none and all four")
    parser.add_argument("--benchmark-version", choices=VERSIONS, default=BENCHMARK_VERSION,
                        help=f"AgentDojo benchmark version (default {BENCHMARK_VERSION})")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, differences = [], []
    for suite in args.task_suite or TASK_SUITES:
        for attack in [None if a == "none" else a for a in args.attack or ("none", *DEFAULT_ATTACKS)]:
            t0 = time.perf_counter()
            version = args.benchmark_version
            theirs = their_ground_truth(suite, attack, out / "agentdojo-logs", version=version)
            t1 = time.perf_counter()
            mine = agentbed_scores(sorted(theirs, key=str), "ground-truth", options={"benchmark_version": version})
            t2 = time.perf_counter()
            diff = compare(mine, theirs)
            differences += [{"task": str(d.task), "agentbed": d.ours and asdict(d.ours),
                             "agentdojo": d.theirs and asdict(d.theirs)} for d in diff]
            rows.append({"version": version, "suite": suite, "attack": attack or "none", "tasks": len(theirs),
                         "utility_agentdojo": sum(s.utility for s in theirs.values()),
                         "utility_agentbed": sum(s.utility for s in mine.values()),
                         "attack_success_agentdojo": sum(bool(s.attack_success) for s in theirs.values()),
                         "attack_success_agentbed": sum(bool(s.attack_success) for s in mine.values()),
                         "differences": len(diff), "seconds_agentdojo": round(t1 - t0, 1),
                         "seconds_agentbed": round(t2 - t1, 1)})
            print(json.dumps(rows[-1]), flush=True)
            # written after every row, so a run stopped part-way keeps the rows it finished
            (out / "crosscheck.json").write_text(json.dumps({"rows": rows, "differences": differences}, indent=1))
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
