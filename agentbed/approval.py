"""A human overseer: a controller that asks a person before a proposed tool call is executed.

The rendezvous is a pair of files in a side folder, outside the run directory (so the viewer
never writes into a run): for each question the run writes ``<key>.request.json``; whoever
answers (the terminal prompt, or ``agentbed view --approvals DIR`` in a browser) writes
``<key>.decision.json``. The run makes the folder itself, private to its user, and every file in
it is created exclusively and read without following a link (:mod:`agentbed.rendezvous`), so a
reader never sees half a file, nothing is written through a planted link, and the first decision
wins (a second finds the name taken). The run polls for the decision, then removes both files.
A decision must name the question it answers (its ``key``); its size is bounded; anything
malformed is refused in one line and the question stays open. ``via`` is the channel the run
got the answer from (``terminal``, ``file``, ``timeout``), never what a file says; a file's
``author`` is recorded as ``claimed_author`` beside the file owner the system reports.

A decision is ``approve`` (the call runs), ``reject`` (the episode stops, status ``stopped``),
``edit`` (the edited call runs instead) or ``handover`` (another agent of the suite proposes
this step's call, which runs; the episode's own agent goes on after it). Each decision, its
author, how it arrived and its latency is recorded in the step's ``control`` member (or the
``control`` record of a stop), inside the hash chain; replay re-applies the recorded decisions
(``agentbed.replay``) instead of asking again. With no answer before the timeout the policy
decides (default ``reject``), so an unattended run never hangs.
"""

from __future__ import annotations

import os
import pwd
import re
import select
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentbed.agents.base import Action, Agent
from agentbed.control import CONTINUE, Controller, StepContext, Verdict
from agentbed.errors import UsageError, printable
from agentbed.rendezvous import private_folder, read_file, remove, replace_with, write_once
from agentbed.scoped import scoped
from agentbed.validate import InputError, check

FORMAT = "agentbed.approval/1"
CHOICES = ("approve", "reject", "edit", "handover")
TIMEOUT_POLICIES = ("reject", "approve")
POLL_SECONDS = 0.1
MAX_ACTION_CHARS = 32 * 1024  # an edited tool call; the agents' own calls are far smaller
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["key", "decision", "author"],
    "properties": {
        "key": {"type": "string", "minLength": 1, "maxLength": 400},
        "decision": {"enum": list(CHOICES)},
        "author": {"type": "string", "minLength": 1, "maxLength": 200},
        "action": {"type": "string", "maxLength": MAX_ACTION_CHARS},
        "agent": {"type": "string", "maxLength": 200},
        "reason": {"type": "string", "maxLength": 2000},
    },
}

REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "key", "episode_id", "step", "proposed", "asked_at", "deadline"],
    "properties": {"format": {"const": FORMAT}, "key": {"type": "string"}, "episode_id": {"type": "string"},
                   "step": {"type": "integer"}, "proposed": {"type": "string"}, "asked_at": {"type": "number"},
                   "deadline": {"type": "number"}, "agents": {"type": "array", "items": {"type": "string"}}},
}


def request_key(episode_id: str, step: int) -> str:
    return _UNSAFE.sub("_", f"{episode_id}.step{step}")


def request_path(folder: Path, key: str) -> Path:
    return folder / f"{key}.request.json"


def decision_path(folder: Path, key: str) -> Path:
    return folder / f"{key}.decision.json"


def check_decision(doc: Any, at: str, agents: list[str] | None = None, key: str | None = None) -> dict[str, Any]:
    """A decision as the schema and the question (``key``, ``agents``) allow it; else InputError."""
    check(doc, DECISION_SCHEMA, at)
    if key is not None and doc["key"] != key:
        raise InputError(f"{at}: field 'key' is {doc['key'][:80]!r}, not the question's key {key!r}")
    if doc["decision"] == "edit" and not doc.get("action"):
        raise InputError(f"{at}: field 'action' is missing (an edit needs the edited call)")
    if doc["decision"] == "handover" and not doc.get("agent"):
        raise InputError(f"{at}: field 'agent' is missing (a handover names the agent)")
    if doc["decision"] == "handover" and agents is not None and doc["agent"] not in agents:
        raise InputError(f"{at}: field 'agent' is {doc['agent']!r}, expected one of {', '.join(agents)}")
    return doc


def pending_requests(folder: Path) -> list[dict[str, Any]]:
    """The questions waiting for an answer (each read through its schema; a bad one is skipped
    with a ``problem`` entry naming it)."""
    out = []
    for path in sorted(folder.glob("*.request.json")) if folder.is_dir() else []:
        key = path.name[: -len(".request.json")]
        if decision_path(folder, key).exists():
            continue
        try:
            doc = read_file(path)
            check(doc, REQUEST_SCHEMA, str(path))
            out.append(doc)
        except InputError as exc:
            out.append({"key": key, "problem": str(exc)})
    return out


@dataclass(frozen=True)
class Asked:
    """What the approver asks about one step."""

    key: str
    episode_id: str
    step: int
    task: str
    agent: str
    proposed: str
    observation: str
    flagged: str  # why this step is asked ("every tool call", or the flagging controller's reason)


class Terminal:
    """The prompt on this process's terminal (when stdin is one), read without blocking."""

    def __init__(self, stream: Any = None, out: Any = None) -> None:
        self.stream, self.out = stream or sys.stdin, out or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._typed = b""

    def ask(self, asked: Asked, agents: list[str]) -> None:
        if not self.enabled:
            return
        # the model's call is shown whole (a call cut short hid its tail from the person approving
        # it) and, like the observation, inert: an escape sequence in either could hide or rewrite
        # what the terminal shows (session 18's probe); the observation only begins
        seen = printable(asked.observation[:300]) + (f" ... ({len(asked.observation)} characters)"
                                                     if len(asked.observation) > 300 else "")
        print(f"\n[approval] {printable(asked.episode_id)} step {asked.step} ({printable(asked.flagged)})\n"
              f"  observation: {seen}\n  proposed: {printable(asked.proposed)}\n  a = approve, r = reject, "
              f"e <call> = run this call instead, h <agent> = hand the step to {'/'.join(agents) or '(none)'}",
              file=self.out, flush=True)
        print("  > ", end="", file=self.out, flush=True)

    def poll(self, key: str, timeout: float) -> dict[str, Any] | None:
        """A decision typed within ``timeout`` seconds, or None (lines are read from the descriptor
        itself, so answers typed ahead are queued, not lost in a stream's buffer)."""
        if not self.enabled:
            time.sleep(timeout)
            return None
        if b"\n" not in self._typed:
            fd = self.stream.fileno()
            if select.select([fd], [], [], timeout)[0]:
                data = os.read(fd, 4096)
                if not data:  # the terminal is gone: only the viewer (or the timeout) answers now
                    self.enabled = False
                self._typed += data
        if b"\n" not in self._typed:
            return None
        raw, self._typed = self._typed.split(b"\n", 1)
        line = raw.decode("utf-8", "replace").strip()
        word, _, rest = line.partition(" ")
        choice = {"a": "approve", "r": "reject", "e": "edit", "h": "handover"}.get(word[:1].lower())
        if choice is None or (choice in ("edit", "handover") and not rest.strip()):
            print("  (a, r, e <call> or h <agent>) > ", end="", file=self.out, flush=True)
            return None
        doc: dict[str, Any] = {"key": key, "decision": choice, "author": os.environ.get("USER") or "terminal"}
        if choice == "edit":
            doc["action"] = rest.strip()
        elif choice == "handover":
            doc["agent"] = rest.strip()
        return doc


def ask(folder: Path, asked: Asked, *, timeout: float, on_timeout: str, agents: list[str],
        terminal: Terminal) -> tuple[dict[str, Any], str, float]:
    """Put one question in ``folder`` (and on the terminal), wait for the first answer or the
    timeout; return (decision, how it came, seconds waited). Both files are gone afterwards."""
    asked_at = time.time()
    request = {"format": FORMAT, "key": asked.key, "episode_id": asked.episode_id, "step": asked.step,
               "task": asked.task, "agent": asked.agent, "proposed": asked.proposed,
               "observation": asked.observation[-4000:], "flagged": asked.flagged, "asked_at": asked_at,
               "deadline": asked_at + timeout, "agents": agents, "choices": list(CHOICES)}
    private_folder(folder)  # made by the run, or refused when it is not private to this user
    decision = decision_path(folder, asked.key)
    remove(decision)  # a stale answer from an earlier run of the same episode
    replace_with(request_path(folder, asked.key), request)  # never written through a link planted there
    terminal.ask(asked, agents)
    start = time.monotonic()
    refused: set[tuple[int, int, int]] = set()  # (inode, size, mtime) of answers already refused, told once
    try:
        while (waited := time.monotonic() - start) < timeout:
            typed = terminal.poll(asked.key, min(POLL_SECONDS, timeout - waited))
            if typed is not None:
                try:
                    check_decision(typed, "terminal", agents, asked.key)
                except InputError as exc:
                    print(f"  {exc}", file=terminal.out)
                    continue
                if write_once(decision, {**typed, "via": "terminal"}):
                    return typed, "terminal", time.monotonic() - start
            answer = _file_answer(decision, asked.key, agents, refused)
            if answer is not None:
                return answer, "file", time.monotonic() - start
        return {"decision": on_timeout, "author": "timeout policy",
                "reason": f"no answer in {timeout:g} s"}, "timeout", timeout
    finally:
        remove(request_path(folder, asked.key))
        remove(decision)


def _file_answer(path: Path, key: str, agents: list[str], refused: set[tuple[int, int, int]],
                 ) -> dict[str, Any] | None:
    """The decision a file holds for question ``key``, or None (none yet, or refused: a bad one
    is named once on stderr and removed when it is a file, and the question stays open). Its
    author is what the file claims; who owns the file is what the system says."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    seen = (st.st_ino, st.st_size, st.st_mtime_ns)
    if seen in refused:
        return None
    try:
        doc = check_decision(read_file(path), str(path), agents, key)
    except InputError as exc:
        refused.add(seen)
        print(f"agentbed: approval refused: {exc}", file=sys.stderr)
        remove(path)
        return None
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = f"uid {st.st_uid}"
    return {**{k: v for k, v in doc.items() if k not in ("via", "author")}, "author": owner,
            "claimed_author": doc["author"]}


class HumanApprover(Controller):
    """Asks before each proposed call (or only those ``flagger`` flags) and waits for a person.

    ``make_agent(name)`` builds another agent of the suite for a handover; ``tools()`` gives the
    episode's tools it acts with. Latency is wall time from asking to the answer (recorded,
    never part of what decides the episode)."""

    name = "human"

    def __init__(self, folder: Path, *, episode_id: str, timeout: float = 300.0, on_timeout: str = "reject",
                 flagger: Controller | None = None, make_agent: Callable[[str], Agent] | None = None,
                 agents: list[str] | None = None, tools: Callable[[], list[Any]] | None = None,
                 terminal: Terminal | None = None) -> None:
        if on_timeout not in TIMEOUT_POLICIES:
            raise UsageError(f"--approval-timeout-policy {on_timeout!r}: expected one of {', '.join(TIMEOUT_POLICIES)}")
        self.folder, self.episode_id, self.timeout, self.on_timeout = folder, episode_id, timeout, on_timeout
        self.flagger, self.make_agent, self.agents = flagger, make_agent, agents or []
        self.tools = tools or list
        self.terminal = terminal or Terminal()
        private_folder(folder)

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        flagged = "every tool call"
        if self.flagger is not None:
            verdict = self.flagger.before_action(ctx, proposed)
            if verdict.kind == "continue":
                return CONTINUE
            flagged = f"flagged: {verdict.kind}" + (f" ({verdict.reason})" if verdict.reason else "")
        text = proposed.text if isinstance(proposed.text, str) else proposed.text.decode("utf-8", "replace")
        asked = Asked(request_key(self.episode_id, ctx.step + 1), self.episode_id, ctx.step + 1, ctx.task,
                      ctx.agent.name, text, ctx.observation, flagged)
        doc, via, latency = self._wait(asked)
        return self._verdict(doc, via, latency, proposed, ctx)

    def _wait(self, asked: Asked) -> tuple[dict[str, Any], str, float]:
        return ask(self.folder, asked, timeout=self.timeout, on_timeout=self.on_timeout, agents=self.agents,
                   terminal=self.terminal)

    def _verdict(self, doc: dict[str, Any], via: str, latency: float, proposed: Action,
                 ctx: StepContext) -> Verdict:
        record = {"by": "human", "author": doc["author"], "decision": doc["decision"], "via": via,
                  "latency_seconds": round(latency, 3)}
        if "claimed_author" in doc:  # a file's own word on who wrote it, kept apart from what is known
            record["claimed_author"] = doc["claimed_author"]
        reason = doc.get("reason") or f"human: {doc['decision']}"
        if doc["decision"] == "approve":
            return Verdict("continue", reason=reason, record=record)
        if doc["decision"] == "reject":
            return Verdict("stop", reason=reason, record=record)
        if doc["decision"] == "edit":
            return Verdict("replace", action=replace(proposed, text=doc["action"]), reason=reason, record=record)
        if self.make_agent is None:
            raise UsageError("a handover needs the suite's agents")
        # as the runner hands over: the other agent, reset for this episode, acts on the current observation
        other = self.make_agent(doc["agent"])
        action = other.act(ctx.observation, self.tools())
        record["agent"] = doc["agent"]
        return Verdict("replace", action=replace(action, meta={**(action.meta or {}), "handed_to": doc["agent"]}),
                       reason=f"human: handed the step to {doc['agent']}", record=record)


def recorded_verdict(control: dict[str, Any], executed: Action) -> Verdict:
    """The verdict a log recorded, to re-apply in replay (the executed action is the log's)."""
    kind = control.get("kind", "continue")
    record, by = control.get("decision"), str(control.get("by") or "")
    if kind == "replace":
        return Verdict("replace", action=executed, reason=control.get("reason", ""), record=record, by=by)
    if kind == "continue":
        return Verdict("continue", reason=control.get("reason", ""), record=record, by=by)
    return CONTINUE  # a handover's agent cannot be rebuilt from the log: its actions are re-fed as recorded


# -- wiring into a run (``agentbed run --approver human``) ---------------------------------------
@dataclass(frozen=True)
class ApproverConfig:
    folder: Path
    timeout: float = 300.0
    on_timeout: str = "reject"
    flagged: str = ""  # "" (ask every call), "risk>=X", or "module:factory" naming a controller

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "human", "folder": str(self.folder), "timeout": self.timeout, "on_timeout": self.on_timeout,
                "flagged": self.flagged}


# Per context, not per process: two runs started in threads of one process (a notebook, a test, a
# service) each ask their own folder, and one run ending does not stop the other's questions.
_CONFIG: ContextVar[ApproverConfig | None] = ContextVar("agentbed_approver", default=None)


def approver_set(config: ApproverConfig | None) -> AbstractContextManager[None]:
    """Episodes this context runs (the serial executor runs them in it) ask ``config``'s human."""
    return scoped(_CONFIG, config)


class RiskFlagger(Controller):
    """Flags a proposed call whose agent-reported risk is at least ``threshold`` (an agent that
    reports none is flagged: nothing says it is safe)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def before_action(self, ctx: StepContext, proposed: Action) -> Verdict:
        if proposed.risk is None or proposed.risk >= self.threshold:
            return Verdict("stop", reason=f"risk {proposed.risk} >= {self.threshold:g}")
        return CONTINUE


def flagger_of(spec: str) -> Controller | None:
    """``risk>=X`` or ``module:factory`` (a callable returning a controller), as the CLI names it."""
    if not spec:
        return None
    if spec.startswith("risk>="):
        try:
            return RiskFlagger(float(spec.removeprefix("risk>=")))
        except ValueError:
            raise UsageError(f"--approve-flagged {spec!r}: expected risk>=NUMBER") from None
    module, _, name = spec.partition(":")
    if not module or not name:
        raise UsageError(f"--approve-flagged {spec!r}: expected risk>=NUMBER or module:factory")
    import importlib

    try:
        factory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--approve-flagged {spec!r}: cannot load it ({exc})") from None
    return factory()


def episode_controller(spec: Any, suite: Any, env: Any) -> HumanApprover | None:
    """The approver for one episode of a run with ``--approver human``; None otherwise."""
    config = _CONFIG.get()
    if config is None:
        return None
    agents = [name for name in suite.agent_names() if name != spec.agent]

    def make_agent(name: str) -> Agent:
        agent = suite.make_agent(replace(spec, agent=name), env)
        agent.reset(seed=spec.seed, task=env.task)
        return agent

    return HumanApprover(config.folder, episode_id=spec.episode_id, timeout=config.timeout,
                         on_timeout=config.on_timeout, flagger=flagger_of(config.flagged), make_agent=make_agent,
                         agents=agents, tools=env.tool_specs)
