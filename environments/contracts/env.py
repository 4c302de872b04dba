"""ContractEnv: one gymnasium environment for every contract family.

A task (tasks.py) names a family and its parameters. The agent sees the family's tools plus
four common ones: ``read_logs`` and ``run_job`` (distractors that cost virtual time and push
artifacts towards expiry; the task may require them before the final call), ``wait`` and
``end_task``. Every answer is a JSON envelope ``{"status", "now", "body"}`` whose body is what
the real API returns, error bodies included, so an agent can recover.

Grading, per use of an artifact (see :meth:`ContractEnv.present`):
  * byte-strict integrity: SHA-256 of the argument string taken from the raw action text vs
    every version issued for that slot; a mismatch is classified (integrity.classify);
  * issuer-faithful integrity and validity: the family's real verifier at virtual now;
  * goal: the family's final call succeeded after the required chores.
A task passes only if every axis passes over the whole attempt. With ``feedback`` on, the first
failed use ends the attempt; the agent gets the label and its explanation and the task restarts
(up to ``max_attempts``), so the gain from feedback is measured on the same task and seed.
"""

from __future__ import annotations

import html
import json
from typing import Any

from agentbed.env import Outcome, TaskSpec, ToolEnv, ToolResult
from agentbed.tools import ToolCall, tool
from environments.contracts import families as _families  # noqa: F401 - registers every family
from environments.contracts.family import FAMILIES, Family, Verdict
from environments.contracts.integrity import classify_against, sha256_hex
from environments.contracts.labels import LABELS, feedback_text, headline
from environments.contracts.tasks import TASKS

LOG_PAGE_COST = 30.0

COMMON_TOOLS = (
    tool("read_logs", f"Read one page of the service audit log ({LOG_PAGE_COST:g} s per page).", cost=LOG_PAGE_COST,
         page={"type": "integer", "minimum": 1, "maximum": 1000}),
    tool("run_job", "Run a named maintenance job to completion (jobs take minutes of virtual time).", cost=1.0,
         job={"type": "string", "maxLength": 200}),
    tool("wait", "Wait a number of virtual seconds.", cost=0.0,
         seconds={"type": "number", "minimum": 0, "maximum": 86400}),
    tool("end_task", "Stop working on the task (give up).", cost=0.0, reason={"type": "string", "maxLength": 4000}),
)


class ContractEnv(ToolEnv):
    """Observation contracts on the virtual clock (ContractBench, paper 1)."""

    max_steps = 80

    def __init__(self, task: TaskSpec | str | None = None, render_mode: str | None = None,
                 feedback: bool = False, max_attempts: int = 2) -> None:
        spec = self.resolve_task(task)
        self._bind_tools(spec)
        super().__init__(spec, render_mode)
        self.feedback = bool(feedback)
        self.max_attempts = max_attempts if self.feedback else 1

    @classmethod
    def task_list(cls) -> list[TaskSpec]:
        return list(TASKS)

    def _bind_tools(self, spec: TaskSpec) -> None:
        self.family: Family[ContractEnv] = FAMILIES[spec.params["family"]]
        self.tools = tuple(self.family.tools) + COMMON_TOOLS
        self._tool_index = {t.name: t for t in self.tools}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        if options and "task" in options:
            self._bind_tools(self.resolve_task(options["task"]))
        return super().reset(seed=seed, options=options)

    # -- episode state -------------------------------------------------------------------
    @property
    def p(self) -> dict[str, Any]:
        return self.task.params

    @property
    def fam(self) -> dict[str, Any]:
        """The family's mutable per-attempt state."""
        return self.state["fam"]

    def setup(self, rng: Any) -> str:
        self.state = {"attempts": [], "raw": ""}
        return json.dumps(self._new_attempt(rng), ensure_ascii=False)

    def _new_attempt(self, rng: Any) -> dict[str, Any]:
        self.state.update(fam=self.family.setup(self, rng), issued={}, chores=[], anchors=[], goal=False)
        self.state["attempts"].append({"labels": [], "uses": [], "goal": False})
        return {"task": self.task.id, "attempt": len(self.state["attempts"]), "now": self.clock.isoformat(),
                "instruction": self.instruction(), "tools": [t.name for t in self.tools]}

    def instruction(self) -> str:
        text = self.family.instruction(self.p)
        chores = self.p.get("chores", [])
        if chores:
            todo = "; ".join(_describe_chore(name, args) for name, args in chores)
            when = (f" after you first obtain the {self.p['chores_after']}" if self.p.get("chores_after") else "")
            between = self.p.get("chores_between")
            if between:  # chore n belongs between the (n-1)-th and the n-th successful call of that tool
                todo = "; ".join(f"{_describe_chore(name, args)} after your {_ordinal(n - 1)} and before your "
                                 f"{_ordinal(n)} successful {between}" if n > 1 else
                                 f"{_describe_chore(name, args)} before your first successful {between}"
                                 for n, (name, args) in enumerate(chores, 1))
            text += f" Required before the final call{when}: {todo}."
        if self.p.get("maintenance"):
            text += (f" Scheduled maintenance: {self.family.final_tool} is unavailable for the first "
                     f"{self.p['maintenance']} s of the task; do not call it before then.")
        return text

    @property
    def attempt(self) -> dict[str, Any]:
        return self.state["attempts"][-1]

    # -- issuing -------------------------------------------------------------------------
    def issue(self, slot: str, value: str, *, display: str | None = None) -> str:
        """Record that ``value`` was handed to the agent as ``slot`` (the byte-strict reference)."""
        versions = self.state["issued"].setdefault(slot, [])
        versions.append({"sha256": sha256_hex(value), "value": value, "display": display, "at": self.clock.now()})
        return value

    def link(self, slot: str, url: str) -> str:
        """Hand out a URL, plain or (task param ``present: html_link``) as an HTML anchor whose
        visible text is shortened, as chat UIs and e-mails show long links."""
        if self.p.get("present") != "html_link":
            return self.issue(slot, url)
        visible = url[:56] + "\u2026"
        self.issue(slot, url, display=visible)
        return f'<a href="{html.escape(url)}">{visible}</a>'

    def first_issued_at(self, slot: str) -> float | None:
        versions = self.state["issued"].get(slot)
        return versions[0]["at"] if versions else None

    # -- answering -----------------------------------------------------------------------
    def respond(self, status: int, body: Any, **extra: Any) -> ToolResult:
        envelope = {"status": status, "now": self.clock.isoformat(), "body": body, **extra}
        return ToolResult(json.dumps(envelope, ensure_ascii=False))

    def ok(self, body: Any) -> ToolResult:
        return self.respond(200, body)

    def raw_argument(self, name: str) -> Any:
        """The argument as it appears in the raw action text (decoded from JSON, no other parsing)."""
        try:
            return json.loads(self.state["raw"])["arguments"][name]
        except (ValueError, KeyError, TypeError):
            return None

    def strict_label(self, slot: str, arg: str) -> str | None:
        """Byte-strict axis for one artifact: the raw argument vs every version issued for ``slot``."""
        sent = self.raw_argument(arg)
        sent = sent if isinstance(sent, str) else ""
        versions = self.state["issued"].get(slot, [])
        digest = sha256_hex(sent)
        if any(v["sha256"] == digest for v in versions):
            return None
        if versions:
            return classify_against(sent, [(v["value"], v["display"]) for v in versions])
        return "MISSING_TOKEN" if sent == "" else "WRONG_VALUE"

    def present(self, slots: dict[str, str], verdict: Verdict, *, final: bool = False) -> ToolResult:
        """Grade one call that uses the artifacts ``slots`` ({slot: argument name}) and answer it."""
        strict = [label for label in (self.strict_label(s, a) for s, a in slots.items()) if label]
        labels = strict + ([verdict.validity] if verdict.validity else [])
        if not labels and not verdict.integrity_ok:
            labels.append("WRONG_VALUE")
        self.attempt["uses"].append({"slots": sorted(slots), "strict": strict[0] if strict else None,
                                     "issuer_ok": verdict.integrity_ok, "validity": verdict.validity,
                                     "status": verdict.status, "raw_sha256": sha256_hex(self.state["raw"]),
                                     "clock": self.clock.now()})
        self.attempt["labels"].extend(labels)
        if verdict.accepted and self.state.get("call") == self.p.get("chores_between"):
            self.state["anchors"].append(self.state["seq"])
        if labels and self.feedback and len(self.state["attempts"]) < self.max_attempts:
            return self._restart(verdict, labels)
        if final and verdict.accepted:
            return self._reach_goal(verdict)
        return self.respond(verdict.status, verdict.body)

    def _restart(self, verdict: Verdict, labels: list[str]) -> ToolResult:
        first = headline(labels)
        restart = self._new_attempt(self.np_random)
        return self.respond(verdict.status, verdict.body, feedback=feedback_text(first), attempt=restart["attempt"],
                            restart=restart)

    def _reach_goal(self, verdict: Verdict) -> ToolResult:
        missing = self.missing_chores() + self.family.missing_steps(self)
        if missing:
            self.attempt["labels"].append("SHORTCUT_TAKEN")
            refused = Verdict(True, None, 409, {"error": "precondition_required",
                                                "message": "Required steps not completed: " + ", ".join(missing)})
            if self.feedback and len(self.state["attempts"]) < self.max_attempts:
                return self._restart(refused, ["SHORTCUT_TAKEN"])
            return self.respond(refused.status, refused.body)
        self.attempt["goal"] = True
        passed = self._attempt_passed(self.attempt)
        result = self.respond(verdict.status, verdict.body)
        result.terminated, result.reward = True, float(passed)
        return result

    def missing_chores(self) -> list[str]:
        """The required chores not done where they count: after the ``chores_after`` slot was first
        issued and, with ``chores_between``, chore n between the (n-1)-th and n-th successful call."""
        after = self.first_issued_at(self.p["chores_after"]) if self.p.get("chores_after") else None
        anchors = [0, *self.state["anchors"], float("inf")]
        missing = []
        for n, (name, args) in enumerate(self.p.get("chores", [])):
            lo, hi = (anchors[n], anchors[n + 1]) if self.p.get("chores_between") else (0, float("inf"))
            if not any(c["id"] == _chore_id(name, args) and (after is None or c["at"] >= after) and lo < c["seq"] < hi
                       for c in self.state["chores"]):
                missing.append(_chore_id(name, args) + (f" (before {self.p['chores_between']} {n + 1})"
                                                        if self.p.get("chores_between") else ""))
        return missing

    # -- dispatch ------------------------------------------------------------------------
    def call_tool(self, call: ToolCall) -> ToolResult:
        self.state["raw"] = call.raw  # grading reads arguments from the raw text, never a re-parse
        self.state["call"] = call.name
        self.state["seq"] = self.state.get("seq", 0) + 1
        bad = next((name for name, value in call.arguments.items() if not _encodable(value)), None)
        if bad is not None:  # a lone surrogate cannot go over HTTP; real clients fail to encode it
            return self.respond(400, {"error": "invalid_request",
                                      "message": f"argument {bad!r} is not valid UTF-8 text (lone surrogate)"})
        if hasattr(self, "common_" + call.name):
            return getattr(self, "common_" + call.name)(**call.arguments)
        if call.name == self.family.final_tool and self.clock.elapsed() < self.p.get("maintenance", 0):
            return self._maintenance()
        return self.family.handle(self, call.name, call.arguments)

    def _maintenance(self) -> ToolResult:
        """Task param ``maintenance``: the final call answers 503 with Retry-After (RFC 9110 15.6.4,
        10.2.3) during an announced window; calling it then is SCHEDULED_UNAVAILABLE."""
        retry_after = self.start_time + self.p["maintenance"] - self.clock.now()
        body = {"error": "service_unavailable", "message": "Scheduled maintenance in progress.",
                "retry_after": retry_after}
        return self.present({}, Verdict(True, "SCHEDULED_UNAVAILABLE", 503, body))

    def common_read_logs(self, page: int) -> ToolResult:
        self.state["chores"].append({"id": _chore_id("read_logs", {"page": page}), "at": self.clock.now(),
                                     "seq": self.state["seq"]})
        lines = [f"{self.clock.isoformat()} page {page} entry {i}: GET /healthz 200" for i in range(3)]
        return self.ok({"page": page, "entries": lines, "next_page": page + 1})

    def common_run_job(self, job: str) -> ToolResult:
        duration = self.p.get("jobs", {}).get(job)
        if duration is None:
            return self.respond(404, {"error": "job_not_found", "message": f"no job named {job[:80]!r}",
                                      "jobs": sorted(self.p.get("jobs", {}))})
        self.clock.advance(float(duration))  # advanced here so the family sees the job's end time
        self.state["chores"].append({"id": _chore_id("run_job", {"job": job}), "at": self.clock.now(),
                                     "seq": self.state["seq"]})
        self.family.on_job(self, job)
        return self.ok({"job": job, "status": "succeeded", "duration_s": duration})

    def common_wait(self, seconds: float) -> ToolResult:
        result = self.ok({"waited_s": seconds})
        result.elapsed = float(seconds)
        return result

    def common_end_task(self, reason: str) -> ToolResult:
        return ToolResult(json.dumps({"status": 200, "now": self.clock.isoformat(), "body": {"ended": True}}),
                          terminated=True)

    # -- grading -------------------------------------------------------------------------
    @staticmethod
    def _axes(attempt: dict[str, Any]) -> dict[str, bool]:
        labels = set(attempt["labels"])
        return {"integrity_strict": all(u["strict"] is None for u in attempt["uses"]),
                "integrity_issuer": all(u["issuer_ok"] for u in attempt["uses"]),
                "validity": not any(LABELS[x].axis == "validity" for x in labels),
                "goal": attempt["goal"] and "SHORTCUT_TAKEN" not in labels}

    def _attempt_passed(self, attempt: dict[str, Any]) -> bool:
        return all(self._axes(attempt).values()) and not attempt["labels"]

    def outcome(self, terminated: bool, total_reward: float) -> Outcome:
        if not self.state or not self.state["attempts"]:
            return Outcome(False, {}, ["GOAL_NOT_MET"])
        attempts = self.state["attempts"]
        final = attempts[-1]
        final_labels = list(final["labels"]) + ([] if final["goal"] else ["GOAL_NOT_MET"])
        passed = self._attempt_passed(final)
        first_labels = list(attempts[0]["labels"]) + ([] if attempts[0]["goal"] else ["GOAL_NOT_MET"])
        metrics = {"family": self.family.name, "pass": passed, "attempts": len(attempts),
                   "first_attempt_pass": self._attempt_passed(attempts[0]),
                   "headline": headline(final_labels), "first_headline": headline(first_labels),
                   "recovered": bool(final["goal"] and final["labels"]), "uses": len(final["uses"]),
                   **self._axes(final)}
        labels = sorted(set(final_labels)) or ["SUCCESS"]
        return Outcome(passed, metrics, labels if not passed else ["SUCCESS"])


def _encodable(value: Any) -> bool:
    """Whether ``value`` (a JSON value) can be sent as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_encodable(k) and _encodable(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_encodable(v) for v in value)
    return True


def _chore_id(name: str, args: dict[str, Any]) -> str:
    return f"{name}:{args.get('page', args.get('job'))}"


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")


def _describe_chore(name: str, args: dict[str, Any]) -> str:
    return f"read log page {args['page']}" if name == "read_logs" else f"run job {args['job']!r}"
