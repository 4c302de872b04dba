"""One episode's trajectory log as Inspect's chat messages and transcript events.

Messages: the first observation is the user's message, each action an assistant message with one
tool call (the raw action text when it is not a tool call), each observation the tool's reply (or
a user message after an action that named no tool).

Events, which Inspect's transcript view draws: a ``sample_init``; for each step a ``model`` event
when the step records a model reply or token usage (its input is the conversation so far, its
output the reply with its usage), a ``tool`` event for an executed tool call, an ``approval``
event for a controller's verdict (replace -> modify, handover -> escalate, stop -> terminate), an
``error`` event for an episode that errored, and the outcome's ``score``. Times come from the
virtual clock, offset from the run's creation time, and ids are derived from the episode id, so
exporting the same run twice gives the same events.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from inspect_ai.event import (
    ApprovalEvent,
    ErrorEvent,
    Event,
    ModelEvent,
    SampleInitEvent,
    ScoreEvent,
    ToolEvent,
)
from inspect_ai.log import EvalError
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParams

from agentbed.log import decode_action, first_system_prompt

_Message = TypeVar("_Message", bound=ChatMessage)  # add() returns the very message it was given

# how a controller's verdict reads as one of Inspect's approval decisions
APPROVAL_DECISIONS = {"replace": "modify", "handover": "escalate", "stop": "terminate", "reject": "reject",
                      "continue": "approve", "approve": "approve"}


def stable_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:22]


@dataclass
class Transcript:
    messages: list[ChatMessage] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def parse_call(action: str | bytes) -> tuple[str, dict[str, Any]] | None:
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


def _reply_data(model_output: Any) -> dict[str, Any]:
    """The reply's fields in a recorded model output (LangChain's message_to_dict form)."""
    message = model_output.get("message") if isinstance(model_output, dict) else None
    data = message.get("data", message) if isinstance(message, dict) else None
    return data if isinstance(data, dict) else {}


def _model_text(model_output: Any) -> str:
    content = _reply_data(model_output).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    return ""


def _model_call_id(model_output: Any) -> str | None:
    calls = _reply_data(model_output).get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict) and isinstance(calls[0].get("id"), str):
        return calls[0]["id"]
    return None


def usage_of(record: dict[str, Any]) -> ModelUsage | None:
    usage = record.get("usage")
    if not isinstance(usage, dict):
        return None
    return ModelUsage(input_tokens=int(usage.get("input_tokens", 0)), output_tokens=int(usage.get("output_tokens", 0)),
                      total_tokens=int(usage.get("total_tokens", 0)))


def tool_infos(header: dict[str, Any]) -> list[ToolInfo]:
    """The episode's tool menu as Inspect's tool descriptions (a schema it cannot read keeps only the name)."""
    infos = []
    for tool in header.get("tools") or []:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        description = str(tool.get("description") or tool["name"])
        try:
            params = ToolParams.model_validate(tool.get("parameters") or {})
        except ValueError:
            params = ToolParams()
        infos.append(ToolInfo(name=tool["name"], description=description, parameters=params))
    return infos


def generate_config(header: dict[str, Any]) -> GenerateConfig:
    """The generation settings the agent recorded in its header, as far as Inspect has names for them."""
    given = header.get("agent")
    agent = given if isinstance(given, dict) else {}
    settings: dict[str, Any] = next((agent[k] for k in ("generation", "settings") if isinstance(agent.get(k), dict)), {})
    known = {k: v for k, v in settings.items() if k in GenerateConfig.model_fields}
    try:
        return GenerateConfig.model_validate(known)
    except ValueError:
        return GenerateConfig()


class _Clock:
    """Event times: the run's creation time plus the episode's virtual seconds (a record without a
    clock, such as the footer, happens at the latest time seen)."""

    def __init__(self, created: str, header: dict[str, Any]) -> None:
        self.base = datetime.fromisoformat(created)
        start = header.get("clock")
        self.start = float(start) if isinstance(start, int | float) else 0.0
        self.latest = 0.0

    def at(self, record: dict[str, Any]) -> tuple[datetime, float]:
        clock = record.get("clock")
        offset = max(0.0, float(clock) - self.start) if isinstance(clock, int | float) else self.latest
        self.latest = max(self.latest, offset)
        return self.base + timedelta(seconds=offset), offset


def transcript(log: list[dict[str, Any]], model: str, episode_id: str, created: str) -> Transcript:
    """The episode as messages and events, in order, one exchange per step."""
    header = log[0] if log and log[0].get("type") == "header" else {}
    clock = _Clock(created, header)
    tools, config = tool_infos(header), generate_config(header)
    out = Transcript()

    def add(message: _Message) -> _Message:
        message.id = stable_id(episode_id, str(len(out.messages)))
        out.messages.append(message)
        return message

    def event(kind: type, record: dict[str, Any], **fields: Any) -> None:
        when, offset = clock.at(record)
        out.events.append(kind(uuid=stable_id(episode_id, "event", str(len(out.events))), timestamp=when,
                               working_start=offset, **fields))

    prompt = first_system_prompt(log)  # what the chat agent sent before the first observation
    if prompt is not None:
        add(ChatMessageSystem(content=prompt, source="input"))
    first = add(ChatMessageUser(content=str(header.get("observation", "")), source="input"))
    event(SampleInitEvent, header, sample={"input": first.text, "id": episode_id},
          state={"messages": [m.model_dump(mode="json") for m in out.messages]})
    before = header  # a step's model call and tool call start when the step before it ended
    for record in log[1:]:
        kind = record.get("type")
        if kind not in {"step", "control"}:
            continue
        action = decode_action(record["action"] if kind == "step" else record["proposed"])
        call = parse_call(action)
        meta = {k: record[k] for k in ("i", "clock", "risk", "reward", "agent") if record.get(k) is not None}
        verdict = record.get("control") or (record.get("verdict") if kind == "control" else None)
        if verdict:
            meta["control"] = verdict
        if kind == "control":
            meta["executed"] = False
        text = _model_text(record.get("model_output"))
        call_id = _model_call_id(record.get("model_output")) or f"step-{record.get('i', len(out.messages))}"
        calls = [ToolCall(id=call_id, function=call[0], arguments=call[1])] if call else None
        context = list(out.messages)
        reply = add(ChatMessageAssistant(content=text if call else (text or _action_text(action)), model=model,
                                         metadata=meta, tool_calls=calls))
        usage = usage_of(record)
        if usage is not None or record.get("model_output") is not None:
            output = ModelOutput.from_message(reply)
            output.model, output.usage = model, usage
            event(ModelEvent, before, model=model, input=context, tools=tools, tool_choice="auto", config=config,
                  output=output)
        if isinstance(verdict, dict):
            _approval(event, before, verdict, reply, calls)
        if kind != "step":
            continue
        started, before = before, record
        observation = str(record.get("observation", ""))
        if call is None:
            add(ChatMessageUser(content=observation))
            continue
        given = record.get("info")
        info = given if isinstance(given, dict) else {}
        error = ToolCallError("parsing", observation) if info.get("action_error") else None
        add(ChatMessageTool(content=observation, tool_call_id=call_id, function=call[0], error=error))
        event(ToolEvent, started, id=call_id, function=call[0], arguments=call[1], result=observation, error=error,
              completed=clock.at(record)[0])
    _ending(event, log[-1] if log and log[-1].get("type") == "footer" else {})
    return out


def _approval(event: Any, record: dict[str, Any], verdict: dict[str, Any], reply: ChatMessageAssistant,
              calls: list[ToolCall] | None) -> None:
    """A controller's verdict as an approval of the proposed call (the executed one when it was replaced)."""
    proposed = verdict.get("proposed")
    proposed_call = parse_call(decode_action(proposed)) if isinstance(proposed, str) else None
    executed = calls[0] if calls else ToolCall(id="none", function="(no tool)", arguments={"text": reply.text})
    call = (ToolCall(id=executed.id, function=proposed_call[0], arguments=proposed_call[1])
            if proposed_call else executed)
    decision = APPROVAL_DECISIONS.get(str(verdict.get("kind")), "reject")
    event(ApprovalEvent, record, message=reply.text, call=call, approver=str(verdict.get("by") or "controller"),
          decision=decision, modified=executed if decision in {"modify", "escalate"} else None,
          explanation=str(verdict.get("reason") or "") or None)


def eval_error(detail: str) -> EvalError:
    """An error as Inspect shows it: the traceback's last line as the message."""
    last = next((x for x in reversed(detail.strip().splitlines()) if x.strip()), detail)
    return EvalError(message=last.strip(), traceback=detail, traceback_ansi=detail)


def _ending(event: Any, footer: dict[str, Any]) -> None:
    if footer.get("status") == "error" and footer.get("error"):
        event(ErrorEvent, footer, error=eval_error(str(footer["error"])))
    if footer:
        event(ScoreEvent, footer, score=Score(value=1.0 if footer.get("success") else 0.0,
                                              metadata={"status": footer.get("status"),
                                                        "labels": footer.get("labels") or []}),
              scorer="agentbed_outcome")
