"""The one episode loop shared by every suite.

``run_episode`` resets the environment, asks the agent for actions, lets its controllers
decide on each one (:mod:`agentbed.oversee`), enforces budgets (steps, virtual seconds, tokens), and writes the
trajectory log. An exception anywhere ends that episode with status ``error`` and its
traceback in the log footer; it never escapes, so a run goes on.
"""

from __future__ import annotations

import hashlib
import platform
import re
import threading
import time
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import agentbed
from agentbed.agents.base import Action, Agent, Usage
from agentbed.control import Controller, StepContext, StepView
from agentbed.errors import episode_failure, failure_text
from agentbed.log import SCHEMA_ID, TrajectoryWriter, encode_action
from agentbed.oversee import Oversight
from agentbed.provenance import header_provenance

if TYPE_CHECKING:  # not at run time: the readers of a run import this module, and gymnasium imports numpy
    from agentbed.env import ToolEnv


def python_release(version: str | None = None) -> str:
    """A Python version as the logs record it: major.minor (``"3.11.7"`` -> ``"3.11"``)."""
    return ".".join((version or platform.python_version()).split(".")[:2])


# Python by major.minor only: the patch release does not change what an episode does, and a log
# must not depend on which node ran it (a Ray node's exact release is an event of the run instead).
VERSIONS = {"agentbed": agentbed.__version__, "python": python_release(), "gymnasium": version("gymnasium")}


@dataclass(frozen=True)
class Budget:
    max_steps: int = 50
    max_virtual_seconds: float | None = None
    max_tokens: int | None = None

    def exceeded(self, steps: int, virtual_seconds: float, tokens: int) -> str | None:
        if steps >= self.max_steps:
            return "steps"
        if self.max_virtual_seconds is not None and virtual_seconds >= self.max_virtual_seconds:
            return "virtual_seconds"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return "tokens"
        return None


_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")
MAX_EPISODE_ID = 200  # characters; the log is EPISODE_ID.jsonl


@dataclass(frozen=True)
class EpisodeSpec:
    """Everything that determines an episode: suite, task, agent, seed and suite options."""

    suite: str
    task: str
    agent: str
    seed: int
    options: dict[str, Any] = field(default_factory=dict)
    faults: float = 0.0  # share of actions damaged on purpose (agentbed.agents.faults); not in the id
    generation: dict[str, Any] = field(default_factory=dict)  # a chat model's settings (run.json); not in the id
    # ``--controller`` references (agentbed.factories), chained in this order; in the header, not in the id
    controllers: tuple[str, ...] = ()
    run: dict[str, Any] = field(default_factory=dict)  # the run it belongs to, for its header (agentbed.binding)
    # the driver's code and suite origin for its header (agentbed.provenance; made here when empty): not in the id
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def episode_id(self) -> str:
        opts = "".join(f",{k}={v}" for k, v in sorted(self.options.items()))
        full = _UNSAFE.sub("_", f"{self.suite}.{self.task}.{self.agent}{opts}.s{self.seed}")
        if len(full) <= MAX_EPISODE_ID:
            return full
        # a file name holds at most 255 bytes: a long id (a branch names its parent's id) keeps its
        # start and a digest of the whole, so it stays unique and the same on every machine
        return f"{full[:MAX_EPISODE_ID - 17]}+{hashlib.sha256(full.encode()).hexdigest()[:16]}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def log_in(self, run_dir: str | Path) -> Path:
        """Where a run directory keeps this episode's trajectory log."""
        return Path(run_dir) / "episodes" / f"{self.episode_id}.jsonl"


@dataclass
class EpisodeRecord:
    """The summary of one finished episode: one line of a run's index."""

    episode_id: str
    suite: str
    task: str
    agent: str
    seed: int
    status: str  # ok | error | budget | stopped
    success: bool
    total_reward: float
    steps: int
    virtual_seconds: float
    tokens: int
    metrics: dict[str, Any] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    log: str = ""
    digest: str = ""
    wall_seconds: float = 0.0
    error: str = ""
    usage: dict[str, Any] = field(default_factory=dict)  # model calls and tokens (agentbed.inflight), for cost

    def to_dict(self) -> dict[str, Any]:
        """As ``dataclasses.asdict`` gives it, without deep-copying immutable leaves: the run's
        parent makes one per finished episode, and asdict cost a fifth of a trivial episode."""
        out = {name: getattr(self, name) for name in _RECORD_FIELDS}
        for name in _RECORD_CONTAINERS:
            out[name] = _plain(out[name])
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


_RECORD_FIELDS = tuple(f.name for f in fields(EpisodeRecord))
_RECORD_CONTAINERS = ("metrics", "labels", "options", "usage")  # the fields that are not scalars


def run_episode(env: ToolEnv, agent: Agent, spec: EpisodeSpec, *, budget: Budget = Budget(),
                controller: Controller | None = None, writer: TrajectoryWriter | None = None,
                parent: dict[str, Any] | None = None, start: Any = None) -> EpisodeRecord:
    """Run one episode and return its record. Never raises for an episode's own failures.

    ``controller`` oversees it (:mod:`agentbed.oversee` applies it). ``start`` continues from an
    existing state instead of resetting: a tuple of (observation, history) prepared by
    :mod:`agentbed.branch`; the log then records the steps from that point on, linked to ``parent``.
    """
    wall0 = time.perf_counter()
    history: list[StepView] = []
    total_reward, tokens, terminated, status, error = 0.0, 0, False, "ok", ""
    stop_reason = ""
    header_written = False
    oversight = Oversight(controller, env, spec.seed) if controller is not None else None
    try:
        if start is None:
            observation, info = env.reset(seed=spec.seed)
            agent.reset(seed=spec.seed, task=env.task)
        else:
            observation, history = start
            info = {"task": env.task.id, "clock": env.clock.now(), "resumed_at_step": len(history)}
        tools = env.tool_specs()
        if oversight is not None and start is None:
            tools = oversight.brief(StepContext(0, observation, history, env.clock, spec.task, agent), tools)
        if writer is not None:
            write_header(writer, spec, task_params=env.task.params, agent=agent.describe(), budget=asdict(budget),
                         parent=parent, tools=_tool_dicts(tools), observation=observation, info=info,
                         clock=env.clock.now())
            header_written = True
        step0 = len(history)
        while True:
            over = budget.exceeded(len(history), env.clock.now() - env.clock.start, tokens)
            if over:
                status, stop_reason = "budget", over
                break
            control, ctx = None, None
            if oversight is not None:
                ctx = StepContext(len(history), observation, history, env.clock, spec.task, agent)
            shown = observation if ctx is None or oversight is None else oversight.show(ctx)
            action = agent.act(shown, tools)  # one call site: a traceback names one line, overseen or not
            if ctx is not None and oversight is not None:
                reviewed = oversight.review(ctx, action, shown, tools)
                action, agent, control = reviewed.action, reviewed.agent, reviewed.record
                if reviewed.stopped:
                    status, stop_reason = "stopped", reviewed.reason
                    _write_control(writer, len(history), action, control, env)
                    break
            usage = action.usage or Usage()
            tokens += usage.total_tokens
            observation, reward, terminated, truncated, info = env.step(action.text)
            total_reward += reward
            history.append(StepView(observation, action.text, reward, info))
            if writer is not None:
                writer.write("step", i=len(history), action=encode_action(action.text), observation=observation,
                             reward=reward, terminated=terminated, truncated=truncated, info=info,
                             clock=env.clock.now(), usage=action.usage.to_dict() if action.usage else None,
                             model_output=action.model_output, risk=action.risk, control=control,
                             agent=agent.name, meta=action.meta or None)
            if terminated:
                break
            if truncated:
                status, stop_reason = "budget", "env_truncated"
                break
        outcome = env.outcome(terminated, total_reward)
        success, metrics, labels = outcome.success, outcome.metrics, outcome.labels
    except BaseException as exc:  # noqa: BLE001 - every failure becomes an episode with status error
        if not episode_failure(exc):
            raise  # a stop of the process (Ctrl-C, SIGTERM): the run keeps what finished
        status, success, metrics, labels = "error", False, {}, ["ERROR"]
        error = failure_text(exc)
        step0 = 0
    finally:
        try:
            env.end_episode()
        except BaseException as exc:  # noqa: BLE001 - a failed clean-up is recorded, never raised
            if not episode_failure(exc):
                raise
            error = (error + "\n" if error else "") + "end_episode failed:\n" + failure_text(exc)
            status = "error"
    record = EpisodeRecord(
        episode_id=spec.episode_id, suite=spec.suite, task=spec.task, agent=spec.agent, seed=spec.seed,
        status=status, success=success and status != "error", total_reward=total_reward,
        steps=len(history) - step0 if status != "error" else len(history), virtual_seconds=env.clock.elapsed(),
        tokens=tokens, metrics=metrics, labels=labels, options=spec.options, error=error[-4000:])
    if writer is not None:
        if not header_written:
            write_header(writer, spec, budget=asdict(budget), parent=parent, clock=env.clock.now())
        writer.write("footer", status=status, stop_reason=stop_reason, success=record.success,
                     total_reward=total_reward, steps=record.steps, virtual_seconds=record.virtual_seconds,
                     tokens=tokens, metrics=metrics, labels=labels, error=error or None)
        writer.close()
        record.digest = writer.last_hash
    record.wall_seconds = time.perf_counter() - wall0
    return record


def write_header(writer: TrajectoryWriter, spec: EpisodeSpec, *, task_params: dict[str, Any] | None = None,
                 agent: dict[str, Any] | None = None, budget: dict[str, Any] | None = None,
                 parent: dict[str, Any] | None = None, tools: list[dict[str, Any]] | None = None,
                 observation: str = "", info: dict[str, Any] | None = None, clock: float | None = None) -> None:
    """The first record of every log; the defaults describe an episode that failed before it began."""
    writer.write("header", schema=SCHEMA_ID, episode_id=spec.episode_id, suite=spec.suite, task=spec.task,
                 task_params=task_params or {}, agent_id=spec.agent, agent=agent or {"name": spec.agent},
                 seed=spec.seed, options=spec.options, budget=budget, parent=parent, versions=VERSIONS,
                 provenance=spec.provenance or _provenance(spec.suite), **({"controllers": list(spec.controllers)} if spec.controllers
                                                        else {}),
                 tools=tools or [], observation=observation, info=info or {}, clock=clock,
                 **({"run": spec.run} if spec.run else {}))  # inside the chain, so under the footer's HMAC


_PROVENANCE: dict[str, dict[str, Any]] = {}


def _provenance(suite: str) -> dict[str, Any]:
    """The header's provenance: agentbed's version and commit and the suite's origin (made once
    per suite and process; see :mod:`agentbed.provenance`)."""
    if suite not in _PROVENANCE:
        _PROVENANCE[suite] = header_provenance(suite)
    return _PROVENANCE[suite]


# tool set (by identity) -> (the tools, their declarations). The tools are kept, so that no id is
# reused by another tool while its entry lives (an id-only key once served a freed tool set's
# declarations to a new one); bounded, oldest first out, as environments may build tools per episode.
_TOOL_DICTS: dict[tuple[int, ...], tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}
_TOOL_DICTS_MAX = 256
_TOOL_DICTS_LOCK = threading.Lock()


def _tool_dicts(tools: list[Any]) -> list[dict[str, Any]]:
    """Tool declarations for the log header, built once per tool set (tools are immutable)."""
    key = tuple(id(t) for t in tools)
    with _TOOL_DICTS_LOCK:  # episodes of a CoCoder team run in threads of one process
        cached = _TOOL_DICTS.get(key)
        if cached is not None and all(a is b for a, b in zip(cached[0], tools, strict=True)):
            return cached[1]
        if len(_TOOL_DICTS) >= _TOOL_DICTS_MAX:
            del _TOOL_DICTS[next(iter(_TOOL_DICTS))]
        dicts = [t.to_dict() for t in tools]
        _TOOL_DICTS[key] = (tuple(tools), dicts)
        return dicts


def _write_control(writer: TrajectoryWriter | None, step: int, proposed: Action, verdict: dict[str, Any] | None,
                   env: ToolEnv) -> None:
    if writer is not None:
        writer.write("control", i=step + 1, proposed=encode_action(proposed.text), verdict=verdict,
                     clock=env.clock.now())
