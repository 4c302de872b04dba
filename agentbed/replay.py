"""Re-execution of a recorded episode and the report of its first divergence."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from agentbed.agents.base import Action, Agent, Usage
from agentbed.agents.faults import FaultyAgent
from agentbed.agents.replay import ReplayAgent
from agentbed.approval import recorded_verdict
from agentbed.control import CONTINUE, StepContext, Verdict, chain, name_of
from agentbed.factories import build_controllers
from agentbed.log import LogFormatError, MemoryWriter, decode_action, read_log
from agentbed.runner import Budget, EpisodeSpec, python_release, run_episode
from agentbed.suite import Suite, SuiteError, get_suite
from agentbed.suite_files import origin_reference

# the chain and the key's HMAC, and which code made the log (the re-run names the code running now):
# not what happened
_IGNORED = {"hash", "prev", "mac", "provenance"}


@dataclass(frozen=True)
class Divergence:
    record: int  # 1-based line of the log
    step: int | None
    field: str
    recorded: Any
    replayed: Any

    def message(self) -> str:
        where = f"step {self.step}" if self.step is not None else f"record {self.record}"
        return f"diverged at {where}, field {self.field!r}: recorded {_short(self.recorded)}, replayed {_short(self.replayed)}"


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


class _RecordedVerdicts:
    """Re-applies the controllers' recorded decisions: stops (control records), and each step's
    recorded ``control`` (a replacement runs the recorded action; a decision kept with a
    ``continue``, e.g. a human's approval, is recorded again as it was), so an overseen
    episode replays from its decisions instead of asking its overseer again. Its verdicts carry
    the recorded ``by`` (none for a log written before verdicts named who decided)."""

    name = ""

    def __init__(self, records: list[dict[str, Any]], rebuilt: Collection[str] = ()) -> None:
        # a decision by a controller that is rebuilt (and decides again) is not re-applied
        self.stops = {r["i"] - 1: r.get("verdict") or {} for r in records if r.get("type") == "control" and
                      (r.get("verdict") or {}).get("kind") == "stop" and (r.get("verdict") or {}).get("by") not in rebuilt}
        self.steps = {r["i"] - 1: r for r in records if r.get("type") == "step" and r.get("control")
                      and r["control"].get("by") not in rebuilt}

    def before_action(self, ctx: StepContext, proposed: Any) -> Verdict:
        if ctx.step in self.stops:
            verdict = self.stops[ctx.step]
            return Verdict("stop", reason=verdict.get("reason") or "recorded", record=verdict.get("decision"),
                           by=verdict.get("by") or "")
        step = self.steps.get(ctx.step)
        if step is None:
            return CONTINUE
        usage = Usage(**step["usage"]) if step.get("usage") else None
        executed = Action(decode_action(step["action"]), usage=usage, model_output=step.get("model_output"),
                          risk=step.get("risk"), meta=dict(step.get("meta") or {}))
        return recorded_verdict(step["control"], executed)


def episode_of(header: dict[str, Any], path: str | Path) -> tuple[Suite, EpisodeSpec, Budget]:
    """The suite, spec and budget a log's header describes, checked against the suite (a
    task, option or budget it does not have is a one-line error naming the header field)."""
    at = f"{path}: line 1 (header)"
    suite = suite_of_header(header, at)
    try:
        options = suite.resolve_options(header.get("options") or {})
    except SuiteError as exc:
        raise LogFormatError(f"{at}: field 'options': {exc}") from None
    if header["task"] not in suite.task_ids(options):
        raise LogFormatError(f"{at}: field 'task' is {header['task']!r}, which suite {suite.name!r} does not have")
    budget = suite.budget
    if header.get("budget"):
        known = {f.name for f in fields(Budget)}
        unknown = sorted(set(header["budget"]) - known)
        if unknown:
            raise LogFormatError(f"{at}: field 'budget.{unknown[0]}' is not a budget field ({', '.join(sorted(known))})")
        try:
            budget = Budget(**header["budget"])
            budget.exceeded(0, 0.0, 0)
        except TypeError as exc:
            raise LogFormatError(f"{at}: field 'budget': {exc}") from None
    controllers = header.get("controllers") or []
    if not isinstance(controllers, list) or not all(isinstance(c, str) for c in controllers):
        raise LogFormatError(f"{at}: field 'controllers' must be a list of module:factory strings")
    spec = EpisodeSpec(header["suite"], header["task"], header.get("agent_id", "replay"), header["seed"],
                       header.get("options") or {}, controllers=tuple(controllers), run=header.get("run") or {})
    return suite, spec, budget


def suite_of_header(header: dict[str, Any], at: str) -> Suite:
    """The suite a log names: installed under its name, or loaded again from the file or module
    its header's provenance records (a one-file suite)."""
    origin = ((header.get("provenance") or {}).get("suite") or {}) if isinstance(header.get("provenance"), dict) else {}
    name = header["suite"]
    ref = origin_reference(origin)
    if ref is not None:  # a replay loads the file as it is now: a changed world shows as a divergence
        suite = get_suite(ref)
        if suite.name != name:
            raise LogFormatError(f"{at}: field 'suite' is {name!r}, but {ref} now declares {suite.name!r}")
        return suite
    return get_suite(name)


def _deciding_agent(suite: Suite, spec: EpisodeSpec, env: Any, recorded: list[dict[str, Any]],
                    rebuilt: Collection[str] = ()) -> Agent | None:
    """The recorded scripted agent itself, when it can decide again: deterministic given its
    seed, so its actions are compared with the recorded ones byte for byte (an edited action,
    even by one space, is a divergence in ``step.action``). None for a model's episode (its
    recorded outputs are re-fed) and for one an overseer changed (replaced or handed over)."""
    header = recorded[0]
    overseen = any(r.get("type") == "step" and (r.get("control") or {}).get("kind") in ("replace", "handover")
                   and (r.get("control") or {}).get("by") not in rebuilt for r in recorded)
    if overseen or spec.agent.startswith("model:") or not suite.has_agent(spec.agent):
        return None
    agent = suite.make_agent(spec, env)
    rate = (header.get("agent") or {}).get("faults")
    if isinstance(rate, int | float) and not isinstance(rate, bool) and rate:
        agent = FaultyAgent(agent, float(rate), spec.seed)
    return agent


class _RebuildingReplay(ReplayAgent):
    """Re-feeds a model's recorded replies; where actions travel as tool calls, the action is
    rebuilt from the recorded reply (as the chat agent built it), so an edited action
    diverges in ``step.action`` rather than being re-fed as if the model had said it."""

    def act(self, observation: str, tools: Any) -> Any:
        step = self.steps[self.position] if self.position < len(self.steps) else {}
        action = super().act(observation, tools)
        output = step.get("model_output")
        if not isinstance(output, dict) or "message" not in output or step.get("control"):
            return action
        from agentbed.agents.confidence import content_text
        from agentbed.agents.toolcalls import action_of_tool_reply, message_from_model_output

        try:
            reply = message_from_model_output(output)
            # the local profile's action is the reply's text; a tool-calling model's, its call
            rebuilt = content_text(reply.content) if output.get("arguments_source") == "content" \
                else action_of_tool_reply(reply)
        except Exception:  # noqa: BLE001 - a reply that no longer parses: re-feed what was recorded
            return action
        recorded = action.text.decode("utf-8", "surrogatepass") if isinstance(action.text, bytes) else action.text
        if _scrubbed(rebuilt) != _scrubbed(recorded):
            action.text = rebuilt
        return action


def _scrubbed(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")


def rerun(path: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Re-execute the episode of the log at ``path``: its scripted agent decides again (see
    :func:`_deciding_agent`), or its recorded actions and model outputs are re-fed."""
    recorded = read_log(path)
    header = recorded[0]
    suite, spec, budget = episode_of(header, path)
    env = suite.make_env(spec.task, spec.options)
    writer = MemoryWriter()
    # the suite's controllers and --controller's decide again (their records are compared like any
    # field); the recorded verdicts of the others (a human's, a flagger's) are re-applied from the log
    given = build_controllers(spec.controllers, suite.setup(spec, env, recorded)) if spec.controllers else []
    rebuilt = {name_of(c) for c in given}
    agent = _deciding_agent(suite, spec, env, recorded, rebuilt) or \
        _RebuildingReplay([r for r in recorded if r.get("type") in ("step", "control")], header.get("agent"))
    controller = chain(suite.episode_controller(spec, env, recorded), *given, _RecordedVerdicts(recorded, rebuilt))
    run_episode(env, agent, spec, budget=budget, writer=writer, controller=controller,
                parent=header.get("parent"))
    env.close()
    return recorded, [json.loads(line) for line in writer.lines]


def _versions_as_recorded_now(record: dict[str, Any]) -> dict[str, Any]:
    """Logs written before headers recorded Python as major.minor named the patch release
    (``3.11.7``), which does not change what an episode does: compare them as ``3.11``."""
    versions = record.get("versions")
    if record.get("type") != "header" or not isinstance(versions, dict) or not isinstance(versions.get("python"), str):
        return record
    return {**record, "versions": {**versions, "python": python_release(versions["python"])}}


def first_divergence(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> Divergence | None:
    def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [_versions_as_recorded_now(r) for r in records if r.get("type") != "control"]

    a, b = comparable(recorded), comparable(replayed)
    for index, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        for key in list(dict.fromkeys([*x, *y])):
            if key in _IGNORED or (key == "stop_reason" and x.get(key) == "recorded"):
                continue
            if x.get(key) != y.get(key):
                if key == "stop_reason" and y.get(key) == "recorded":
                    continue
                return Divergence(index, x.get("i"), f"{x.get('type')}.{key}", x.get(key), y.get(key))
    if len(a) != len(b):
        return Divergence(min(len(a), len(b)) + 1, None, "records", len(a), len(b))
    return None
